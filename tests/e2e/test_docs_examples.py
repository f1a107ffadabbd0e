"""The example call of each tool in the MCP tool reference gives, against the replay
upstream, exactly the result the reference shows (but for values that change from call
to call, such as when a notice was checked)."""

from __future__ import annotations

import json
from typing import Any

from mcp.client.session import ClientSession
from mcputil import mcp_session
from test_cli_mcp_parity import VOLATILE

from doiget.reference import EXAMPLES, REGENERATE

from papersutil import route_pnas
from replay import ReplayUpstream
from scholarutil import (
    route_every_scholar_tool,
)


def route_examples(upstream: ReplayUpstream) -> None:
    """Every upstream answer the documented calls need."""
    route_pnas(upstream)
    route_every_scholar_tool(upstream)


async def documented_results(
    session: ClientSession, examples: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Each example's structured result, as the server gives it now."""
    results = {}
    for tool, example in examples.items():
        result = await session.call_tool(tool, example["arguments"])
        assert not result.is_error, f"{tool}: {result.content}"
        results[tool] = result.structured_content
    return results


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(item) for item in value]
    return value


async def test_every_documented_example_gives_the_documented_result(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    examples: dict[str, dict[str, Any]] = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    assert examples, "the reference documents no example"
    route_examples(upstream)
    async with mcp_session(doiget_env, toolsets="papers,scholar") as session:
        got = await documented_results(session, examples)
    for tool, example in examples.items():
        assert _steady(got[tool]) == _steady(example["result"]), (
            f"{tool}'s documented result is out of date: put this result in "
            f"docs/reference/examples.json, then run {REGENERATE}:\n"
            + json.dumps(got[tool], indent=2, ensure_ascii=False)
        )
