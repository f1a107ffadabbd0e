"""``doiget serve``: the MCP server over stdio."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from doiget.cli.output import handles_errors, runtime, state
from doiget.config import DYNAMIC, KNOWN_TOOLSETS, parse_toolsets
from doiget.errors import DoigetError, ErrorCode


@handles_errors
def serve(
    ctx: typer.Context,
    toolsets: Annotated[
        str | None,
        typer.Option(
            "--toolsets",
            help=f"Comma list of toolsets to serve ({', '.join(KNOWN_TOOLSETS)}), or {DYNAMIC}: "
            "a small core plus doiget_toolsets, with which the agent turns toolsets on; "
            "default DOIGET_TOOLSETS, else all (zotero when a Zotero library is configured).",
        ),
    ] = None,
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="Serve MCP Streamable HTTP at /mcp for a team instead of stdio; bearer "
            "tokens required (DOIGET_HTTP_TOKENS_FILE).",
        ),
    ] = False,
    host: Annotated[
        str | None, typer.Option(help="With --http: address to bind (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="With --http: port (default 8765).")] = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth",
            help="With --http: no authentication; refused unless the address is loopback.",
        ),
    ] = False,
) -> None:
    """Run the MCP server: over stdio by default, over HTTP with --http.

    Over stdio (stdout carries JSON-RPC frames only) it waits for an MCP client on
    stdin: an MCP host (Claude Desktop, an IDE) starts it itself. Started by hand it
    shows the banner and waits; Ctrl-D or Ctrl-C ends it. With --http it listens until SIGTERM
    or Ctrl-C, then lets calls in flight finish.
    """
    cli = state(ctx)
    if cli.serve is None or cli.serve_http is None:
        raise DoigetError(ErrorCode.INTERNAL_ERROR, "serve runs through the doiget program.")
    if toolsets is not None:
        parse_toolsets(toolsets, "--toolsets")
    given = {
        "DOIGET_TOOLSETS": toolsets,
        "DOIGET_HTTP_HOST": host,
        "DOIGET_HTTP_PORT": None if port is None else str(port),
        "DOIGET_HTTP_INSECURE_NO_AUTH": "1" if insecure_no_auth else None,
    }
    if not http and any(given[name] is not None for name in given if "_HTTP_" in name):
        raise DoigetError(
            ErrorCode.INVALID_REF, "--host, --port and --insecure-no-auth go with --http."
        )
    overrides = {name: value for name, value in given.items() if value is not None} or None
    if http:
        cli.serve_http(runtime(ctx, overrides, serving=True, http=True))
    else:
        anyio.run(cli.serve, runtime(ctx, overrides, serving=True))
