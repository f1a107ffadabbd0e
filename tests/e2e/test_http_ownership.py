"""serve --http with two tokens: research sessions and resource-link artifacts belong
to the token that made them, on disk and in Redis.

Another token asking for one by id gets exactly the answer an id that never existed
gets, and one token's sessions never evict another's. Real server on loopback, the
SDK's client for each token, the replay upstream for the page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from httputil import TOKEN, http_server, http_session, token_file
from mcp.shared.exceptions import MCPError
from redisutil import REDIS_SERVER, RedisServer, redis_server_fixture  # noqa: F401
from webpages import LONG_PAGE

from replay import ReplayUpstream, Reply

OTHER = "second-token-0a9b8c7d6e5f4"
NEVER = "0" * 32


@pytest.fixture(params=["disk", "redis"])
def team_env(
    request: pytest.FixtureRequest, doiget_env: dict[str, str], tmp_path: Path
) -> dict[str, str]:
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN, OTHER))}
    if request.param == "redis":
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed (Debian package redis-server)")
        server: RedisServer = request.getfixturevalue("redis_server")
        env["REDIS_URL"] = server.url
    return env


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error
    return dict((result.structured_content or {})["error"])


def without(text: str, session_id: str) -> str:
    return text.replace(session_id, "<id>")


async def test_a_research_session_is_its_tokens_alone(
    team_env: dict[str, str], tmp_path: Path
) -> None:
    step = {
        "stepNumber": 1,
        "searchStep": "What limits battery life?",
        "nextStepNeeded": True,
        "researchGoal": "batteries",
    }
    later = {"stepNumber": 2, "searchStep": "more", "nextStepNeeded": False}
    with http_server(team_env, tmp_path) as server:
        async with http_session(server.url, TOKEN) as mine:
            started = await mine.call_tool("sequential_search", step)
            session_id = (started.structured_content or {})["sessionId"]
            async with http_session(server.url, OTHER) as theirs:
                foreign = {
                    "read": await theirs.call_tool(
                        "get_research_session", {"sessionId": session_id}
                    ),
                    "step": await theirs.call_tool(
                        "sequential_search", {**later, "sessionId": session_id}
                    ),
                    "export": await theirs.call_tool(
                        "research_export", {"sessionId": session_id, "format": "json"}
                    ),
                }
                never = {
                    "read": await theirs.call_tool("get_research_session", {"sessionId": NEVER}),
                    "step": await theirs.call_tool(
                        "sequential_search", {**later, "sessionId": NEVER}
                    ),
                    "export": await theirs.call_tool(
                        "research_export", {"sessionId": NEVER, "format": "json"}
                    ),
                }
                # More sessions than one token may keep: only that token's oldest go.
                for number in range(51):
                    flood = {**step, "searchStep": f"flood {number}"}
                    assert not (await theirs.call_tool("sequential_search", flood)).is_error
            still = await mine.call_tool("get_research_session", {"sessionId": session_id})
    for name, result in foreign.items():
        error = error_of(result)
        assert error["kind"] == "not_found", name
        assert without(json.dumps(error), session_id) == without(
            json.dumps(error_of(never[name])), NEVER
        ), name
    assert not still.is_error
    assert (still.structured_content or {})["sessionId"] == session_id


async def test_a_linked_result_is_its_tokens_alone(
    team_env: dict[str, str], tmp_path: Path, upstream: ReplayUpstream
) -> None:
    upstream.route(
        "blog.example.org", "/essay", Reply(200, LONG_PAGE, {"Content-Type": "text/html"})
    )
    scrape = {"url": "https://blog.example.org/essay", "mode": "raw"}
    with http_server(team_env, tmp_path) as server:
        async with http_session(server.url, TOKEN) as mine:
            scraped = await mine.call_tool("scrape_page", scrape)
            uri = (scraped.structured_content or {})["resource"]
            async with http_session(server.url, OTHER) as theirs:
                with pytest.raises(MCPError) as foreign:
                    await theirs.read_resource(uri)
                with pytest.raises(MCPError) as never:
                    await theirs.read_resource("research://artifact/" + "0" * 64)
            read = await mine.read_resource(uri)
    assert foreign.value.error.code == never.value.error.code
    assert foreign.value.error.message.replace(uri, "<uri>") == never.value.error.message.replace(
        "research://artifact/" + "0" * 64, "<uri>"
    )
    assert "Paragraph 199" in json.loads(read.contents[0].text)["content"]  # type: ignore[union-attr]
