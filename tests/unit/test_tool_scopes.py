"""The MCP server checks the scope of every tool call itself, whatever reached it (the
HTTP layer's 403 aside): a read tool needs the read scope, any other the write scope."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from doiget.runtime import load_runtime
from doiget.server.app import DoigetServer
from doiget.server.oauth.scopes import ToolScopes


def context(*scopes: str) -> Any:
    token = SimpleNamespace(client_id="alice@https://sso.lab.example/realms/lab")
    user = SimpleNamespace(scopes=list(scopes), access_token=token)
    return SimpleNamespace(request=SimpleNamespace(scope={"user": user}))


@pytest.fixture
def server(doiget_env: dict[str, str]) -> DoigetServer:
    doiget = DoigetServer(load_runtime(doiget_env, http=True))
    doiget.scopes = ToolScopes("lab.read", "lab.write", doiget.read_only_tools())
    return doiget


def test_read_only_tools_are_those_annotated_so(server: DoigetServer) -> None:
    read_only = server.read_only_tools()
    assert {"doiget_info", "doiget_search_local", "doiget_capability_profile"} <= read_only
    assert not {"doiget_fetch_paper", "doiget_add_pdf", "doiget_import_bibliography"} & read_only


@pytest.mark.parametrize(
    ("tool", "granted", "needed"),
    [
        ("doiget_fetch_paper", ("lab.read",), "lab.write"),
        ("doiget_batch_fetch", ("lab.read",), "lab.write"),
        ("doiget_info", ("lab.write",), "lab.read"),
        ("doiget_info", (), "lab.read"),
        ("made_up_tool", ("lab.read",), "lab.write"),
    ],
)
async def test_a_call_without_its_scope_is_an_mcp_error_naming_it(
    server: DoigetServer, tool: str, granted: tuple[str, ...], needed: str
) -> None:
    params = types.CallToolRequestParams(name=tool, arguments={"ref": "10.1234/x"})
    with pytest.raises(MCPError) as refused:
        await server.call_tool(context(*granted), params)
    assert needed in refused.value.error.message
    assert refused.value.error.data == {"scope": needed}
