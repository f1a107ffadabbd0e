"""doiget serve --toolsets dynamic with the official MCP client: the core is listed, the
agent turns toolsets on and off with doiget_toolsets, each change arrives as
notifications/tools/list_changed on the same connection, and over HTTP each session
keeps its own list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from httputil import TOKEN, http_server, http_session, token_file
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcputil import call, mcp_session

from doiget.server.dynamic import CORE, NAME

LISTED_AT_START = {*CORE, NAME}
LIBRARY = {
    "list_projects",
    "find_chunks",
    "query_hybrid",
    "inspect_collection",
    "index_papers",
    "store_chunks",
}


class Changes:
    """The tools/list_changed notifications a client received."""

    def __init__(self) -> None:
        self.count = 0
        self._arrived = anyio.Event()

    async def handle(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self._arrived.set()

    async def next(self) -> None:
        """Wait for one more notification."""
        with anyio.fail_after(20):
            await self._arrived.wait()
        self._arrived = anyio.Event()


async def names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


async def switch(session: ClientSession, action: str, toolset: str) -> dict[str, Any]:
    return await call(session, NAME, {"action": action, "toolset": toolset})


async def test_an_agent_starts_in_the_core_and_turns_library_on_and_off(
    doiget_env: dict[str, str],
) -> None:
    changes = Changes()
    async with mcp_session(doiget_env, toolsets="dynamic", message_handler=changes.handle) as s:
        capabilities = s.server_capabilities
        start = await names(s)
        before = await s.call_tool("list_projects", {})
        found = await call(s, "doiget_search_local", {"query": "ice"})
        listed = await call(s, NAME, {})
        enabled = await switch(s, "enable", "library")
        await changes.next()
        with_library = await names(s)
        projects = await s.call_tool("list_projects", {})
        again = await switch(s, "enable", "library")
        disabled = await switch(s, "disable", "library")
        await changes.next()
        after = await names(s)
        refused_again = await s.call_tool("list_projects", {})
    assert capabilities is not None and capabilities.tools is not None
    assert capabilities.tools.list_changed is True
    assert start == LISTED_AT_START
    # A tool of a toolset that is off: a coded refusal naming the way to turn it on.
    assert before.is_error
    assert "CAPABILITY_DENIED" in before.content[0].text  # type: ignore[union-attr]
    assert "doiget_toolsets" in before.content[0].text  # type: ignore[union-attr]
    assert "toolset=library" in before.content[0].text  # type: ignore[union-attr]
    # A core tool works without enabling the toolset it belongs to.
    assert found["ok"] is True
    by_name = {row["name"]: row for row in listed["toolsets"]}
    assert set(by_name) == {"papers", "scholar", "library", "web", "zotero"}
    assert not any(row["enabled"] for row in listed["toolsets"])
    assert "DOIGET_ZOTERO" in by_name["zotero"]["off"]  # not configured: cannot be enabled
    assert all(row["summary"] for row in listed["toolsets"])
    assert enabled["changed"] is True
    assert {row["name"] for row in enabled["toolsets"] if row["enabled"]} == {"library"}
    assert with_library == LISTED_AT_START | LIBRARY
    assert not projects.is_error and projects.structured_content is not None
    assert projects.structured_content["projects"][0]["id"] == "doiget/papers"
    assert again["changed"] is False
    assert disabled["changed"] is True
    assert after == LISTED_AT_START
    assert refused_again.is_error
    assert changes.count == 2  # enabling an enabled toolset announced nothing


async def test_bad_switches_are_refused_with_what_to_send(doiget_env: dict[str, str]) -> None:
    changes = Changes()
    async with mcp_session(doiget_env, toolsets="dynamic", message_handler=changes.handle) as s:
        unknown = await s.call_tool(NAME, {"action": "enable", "toolset": "libary"})
        nameless = await s.call_tool(NAME, {"action": "enable"})
        bad_action = await s.call_tool(NAME, {"action": "toggle", "toolset": "web"})
        zotero = await s.call_tool(NAME, {"action": "enable", "toolset": "zotero"})
        scholar_off = await s.call_tool("search_arxiv", {"query": "ice"})
        web_off = await s.call_tool("web_search", {"query": "ice"})
        still = await names(s)
    for refused in (unknown, nameless, bad_action):
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "INVALID_REF"
    assert "library" in unknown.structured_content["error"]["message"]  # type: ignore[index]
    assert zotero.is_error and zotero.structured_content is not None
    assert zotero.structured_content["error"]["code"] == "CAPABILITY_DENIED"
    assert "DOIGET_ZOTERO" in zotero.structured_content["error"]["message"]
    # Each toolset's own error shape, each naming the call that turns the toolset on.
    for refused, toolset in ((scholar_off, "scholar"), (web_off, "web")):
        assert refused.is_error
        assert f"toolset={toolset}" in refused.content[0].text  # type: ignore[union-attr]
    assert still == LISTED_AT_START
    assert changes.count == 0


async def test_a_fixed_selection_lists_no_switch_and_no_list_changes(
    doiget_env: dict[str, str],
) -> None:
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        capabilities = session.server_capabilities
        listed = await names(session)
        with pytest.raises(MCPError, match="Unknown tool"):
            await session.call_tool(NAME, {})
    assert capabilities is not None and capabilities.tools is not None
    assert not capabilities.tools.list_changed
    assert NAME not in listed and listed >= LIBRARY


async def test_over_http_each_session_keeps_its_own_toolsets(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = {
        **doiget_env,
        "DOIGET_TOOLSETS": "dynamic",
        "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN)),
    }
    first_changes, second_changes = Changes(), Changes()
    with http_server(env, tmp_path) as server:
        async with (
            http_session(server.url, message_handler=first_changes.handle) as first,
            http_session(server.url, message_handler=second_changes.handle) as second,
        ):
            capabilities = first.server_capabilities
            await switch(first, "enable", "library")
            await first_changes.next()
            await switch(second, "enable", "web")
            await second_changes.next()
            first_tools = await names(first)
            second_tools = await names(second)
            projects = await first.call_tool("list_projects", {})
            refused = await second.call_tool("list_projects", {})
            await switch(first, "disable", "library")
            await first_changes.next()
            second_after = await names(second)
    assert capabilities is not None and capabilities.tools is not None
    assert capabilities.tools.list_changed is True
    assert first_tools >= LIBRARY and "web_search" not in first_tools
    assert "web_search" in second_tools and not LIBRARY & second_tools
    assert not projects.is_error
    assert refused.is_error
    assert second_after == second_tools
    assert (first_changes.count, second_changes.count) == (2, 1)
