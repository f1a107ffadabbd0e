"""``doiget serve``: the MCP server over stdio."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from doiget.cli.output import handles_errors, runtime, state
from doiget.config import KNOWN_TOOLSETS, parse_toolsets
from doiget.errors import DoigetError, ErrorCode


@handles_errors
def serve(
    ctx: typer.Context,
    toolsets: Annotated[
        str | None,
        typer.Option(
            "--toolsets",
            help=f"Comma list of toolsets to serve ({', '.join(KNOWN_TOOLSETS)}); "
            "default DOIGET_TOOLSETS, else all.",
        ),
    ] = None,
) -> None:
    """Run the MCP server over stdio (stdout carries JSON-RPC frames only).

    It waits for an MCP client on stdin: an MCP host (Claude Desktop, an IDE) starts it
    itself. Started by hand it shows the banner and waits; Ctrl-D ends it.
    """
    serve_stdio = state(ctx).serve
    if serve_stdio is None:
        raise DoigetError(ErrorCode.INTERNAL_ERROR, "serve runs through the doiget program.")
    if toolsets is not None:
        parse_toolsets(toolsets, "--toolsets")
    overrides = {"DOIGET_TOOLSETS": toolsets} if toolsets is not None else None
    anyio.run(serve_stdio, runtime(ctx, overrides))
