"""``doiget serve``: the MCP server over stdio."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from doiget.cli.output import handles_errors, runtime
from doiget.config import KNOWN_TOOLSETS


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
    """Run the MCP server over stdio (stdout carries JSON-RPC frames only)."""
    from doiget.server.app import serve_stdio

    overrides = {"DOIGET_TOOLSETS": toolsets} if toolsets is not None else None
    anyio.run(serve_stdio, runtime(ctx, overrides))
