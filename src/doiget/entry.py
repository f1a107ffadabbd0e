"""The ``doiget`` program's entry point.

``doiget serve`` (optionally with ``--toolsets X``) starts the MCP server directly,
without loading the command-line framework: an MCP host spawns the server often, and
its start-up should cost little more than the MCP SDK itself. Everything else goes
to the full command line.
"""

from __future__ import annotations

import sys


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

    app()
