"""The ``doiget`` program's entry point.

``doiget serve`` (optionally with ``--toolsets X``) starts the MCP server directly,
without loading the command-line framework: an MCP host spawns the server often, and
its start-up should cost little more than the MCP SDK itself. Everything else goes
to the full command line, which reaches the server only through what is handed to it
here: the two faces do not import each other.

Ctrl-C ends any command at once, without a traceback, with the shell's status for it
(130): the interrupt unwinds the command (its ``finally`` blocks remove temp files
and release locks), then the process leaves without waiting for worker threads that
may be blocked in a read. A server stops gracefully on the first Ctrl-C instead (its
own handler), and at once on a second.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from contextlib import suppress
from types import FrameType
from typing import TYPE_CHECKING, Final, NoReturn

if TYPE_CHECKING:
    from doiget.runtime import Runtime


INTERRUPTED_STATUS: Final = 128 + signal.SIGINT


class Interrupted(BaseException):
    """Ctrl-C. Not a ``KeyboardInterrupt``, which the command-line framework would
    turn into "Aborted!" and status 1, and the event loop into a traceback."""


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise Interrupted


def _leave(status: int) -> NoReturn:
    """End the process now, with what was written so far flushed."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(status)


def _plain_serve(argv: list[str]) -> tuple[bool, str | None]:
    """(True, toolsets or None) when ``argv`` is a plain ``serve`` invocation."""
    if argv == ["serve"]:
        return True, None
    if len(argv) == 3 and argv[:2] == ["serve", "--toolsets"]:
        return True, argv[2]
    if len(argv) == 2 and argv[0] == "serve" and argv[1].startswith("--toolsets="):
        return True, argv[1].partition("=")[2]
    return False, None


def main() -> None:
    """Run ``doiget`` with the process arguments."""
    signal.signal(signal.SIGINT, _interrupt)
    try:
        _run()
    except Interrupted:
        print("doiget: interrupted", file=sys.stderr)
        _leave(INTERRUPTED_STATUS)


def _run() -> None:
    plain, toolsets = _plain_serve(sys.argv[1:])
    if plain:
        from doiget.server.entry import serve_main

        sys.exit(serve_main(toolsets))
    from doiget.cli.main import app
    from doiget.cli.output import CliState

    app(obj=CliState(serve=_serve_stdio, serve_http=_serve_http))


async def _serve_stdio(runtime: Runtime) -> None:
    """The MCP server for the command line's ``serve``, which does not import the server."""
    from doiget.server.app import serve_stdio

    await serve_stdio(runtime)


def _serve_http(runtime: Runtime) -> None:
    """The HTTP server for the command line's ``serve --http``."""
    from doiget.server.http import serve_http

    serve_http(runtime)
