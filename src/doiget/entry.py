"""The ``doiget`` program's entry point.

``doiget serve`` (optionally with ``--toolsets X``) starts the MCP server directly,
without loading the command-line framework: an MCP host spawns the server often, and
its start-up should cost little more than the MCP SDK itself. Everything else goes
to the full command line, which reaches the server only through what is handed to it
here: the two faces do not import each other.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doiget.runtime import Runtime


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
