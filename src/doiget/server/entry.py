"""Start the stdio server from a bare process (see :mod:`doiget.entry`)."""

from __future__ import annotations

import os
import sys

import anyio

from doiget.config import parse_toolsets
from doiget.errors import DoigetError
from doiget.runtime import load_runtime, start_logging
from doiget.server.app import serve_stdio


def serve_main(toolsets: str | None) -> int:
    """Serve until the client leaves; the exit status (0, or the error's status)."""
    try:
        if toolsets is not None:
            parse_toolsets(toolsets, "--toolsets")
        environ = {**os.environ, "DOIGET_TOOLSETS": toolsets} if toolsets is not None else None
        runtime = load_runtime(environ)
        start_logging(runtime, banner=True)
        anyio.run(serve_stdio, runtime)
    except DoigetError as error:
        print(f"doiget: {error.code.value}: {error.message}", file=sys.stderr)
        return error.exit_status
    return 0
