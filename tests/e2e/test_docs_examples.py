"""The example call of each tool in the MCP tool reference gives, against the replay
upstream, exactly the result the reference shows."""

from __future__ import annotations

import json
from typing import Any

from mcputil import mcp_session
from test_mcp_scholar import scholar_call

from doiget.reference import EXAMPLES, REGENERATE

from replay import ReplayUpstream
from scholarutil import ARXIV_API, EFETCH, EUTILS, route_s2_pnas


def _route(upstream: ReplayUpstream) -> None:
    route_s2_pnas(upstream)
    upstream.fixture(EUTILS, EFETCH, "pubmed/efetch-pubmed-38147649.xml")
    upstream.fixture(
        *ARXIV_API,
        "arxiv/id_list-quant-ph_0201082v1.atom",
        query={"id_list": "quant-ph/0201082v1", "max_results": "1"},
    )


async def test_every_documented_example_gives_the_documented_result(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    examples: dict[str, dict[str, Any]] = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    assert examples, "the reference documents no example"
    _route(upstream)
    async with mcp_session(doiget_env, toolsets="scholar") as session:
        got = {
            tool: await scholar_call(session, tool, example["arguments"])
            for tool, example in examples.items()
        }
    for tool, example in examples.items():
        assert got[tool] == example["result"], (
            f"{tool}'s documented result is out of date: put this result in "
            f"docs/reference/examples.json, then run {REGENERATE}:\n"
            + json.dumps(got[tool], indent=2, ensure_ascii=False)
        )
