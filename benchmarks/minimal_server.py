"""The comparator of http_load.py: a minimal MCP server on the same SDK, transport and
web server as ``doiget serve --http`` (Streamable HTTP sessions under uvicorn), with
one tool answering a small fixed object, and nothing else: no authentication, no
access log, no rate gate.

    python benchmarks/minimal_server.py PORT
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route

ANSWER = {"projects": [{"id": "bench/load", "collection": "bench_load", "hybrid_enabled": True}]}


async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
    tool = types.Tool(name="list_projects", input_schema={"type": "object"})
    return types.ListToolsResult(tools=[tool])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    import json

    text = json.dumps(ANSWER)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=ANSWER
    )


class Endpoint:
    """The session manager as a plain ASGI app (Starlette treats a bound method as a
    request handler)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


def main() -> None:
    port = int(sys.argv[1])
    server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)
    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(
        routes=[Route("/mcp", Endpoint(manager), methods=["GET", "POST", "DELETE"])],
        lifespan=lifespan,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
