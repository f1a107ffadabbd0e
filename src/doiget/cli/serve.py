"""``doiget serve``: the MCP server over stdio."""

from __future__ import annotations

import typer

from doiget.cli.output import handles_errors, runtime
from doiget.errors import DoigetError, ErrorCode


@handles_errors
def serve(ctx: typer.Context) -> None:
    """Run the MCP server over stdio (stdout carries JSON-RPC frames only)."""
    runtime(ctx)
    raise DoigetError(
        ErrorCode.INTERNAL_ERROR,
        "the MCP server is not part of this build yet; use the command line "
        "(doiget --help) meanwhile.",
    )
