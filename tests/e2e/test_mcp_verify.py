"""doiget_verify_references over MCP: the same rows as the command line, progress sent."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from mcputil import call, mcp_session
from verifyutil import BIB, route_chain_of_thought

from replay import ReplayUpstream


async def test_the_tool_returns_one_row_per_reference_in_order(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)
    fabricated = "Gui P, Tokmakov T. Quantum gravity priors for sparse transformers. ICML 2021."
    async with mcp_session(doiget_env) as session:
        result = await call(session, "doiget_verify_references", {"references": [BIB, fabricated]})
    assert result["ok"] is True
    assert [row["verdict"] for row in result["results"]] == ["verified", "not_found"]
    assert result["results"][0]["match"]["venue"] == "NeurIPS"


async def test_bad_input_is_an_invalid_ref_envelope(doiget_env: dict[str, str]) -> None:
    async with mcp_session(doiget_env) as session:
        too_many = await call(session, "doiget_verify_references", {"references": ["x"] * 101})
        wrong = await call(session, "doiget_verify_references", {"references": [3]})
    assert too_many["error"]["code"] == wrong["error"]["code"] == "INVALID_REF"


async def test_items_no_reference_can_be_are_refused_and_the_server_goes_on(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)

    def nested(depth: int) -> dict[str, object]:
        item: dict[str, object] = {"id": "x", "title": "T"}
        for _ in range(depth):
            item = {"id": "x", "title": "T", "author": [item]}
        return item

    async with mcp_session(doiget_env) as session:
        deep = await call(session, "doiget_verify_references", {"references": [nested(20)]})
        with pytest.raises(MCPError) as refused:  # JSON-RPC refuses it before any tool runs
            await call(session, "doiget_verify_references", {"references": [nested(100)]})
        long = await call(session, "doiget_verify_references", {"references": ["x" * 20_001]})
        braces = "@article{k, title={" + "{" * 5000 + "x" + "}" * 5000 + "}}"
        odd = await call(session, "doiget_verify_references", {"references": [braces]})
        after = await call(session, "doiget_verify_references", {"references": [BIB]})
    for refused_item in (deep, long):  # the call answers; the item's row says why
        [row] = refused_item["results"]
        assert row["error"]["code"] == "INVALID_REF" and row["verdict"] == "uncertain"
    assert "malformed" in str(refused.value)
    assert odd["ok"] is True and len(odd["results"]) == 1
    assert after["results"][0]["verdict"] == "verified"


async def test_bare_identifiers_and_unreadable_items_each_get_their_row(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)
    references = [
        "10.1073/pnas.1414271111",
        "https://doi.org/10.1073/PNAS.1414271111",
        "",
        "x" * 20_001,
        "doi:10.1234/x/../../members/311",
        "https://example.com/a-paper",
        BIB,
    ]
    async with mcp_session(doiget_env) as session:
        result = await call(session, "doiget_verify_references", {"references": references})
    rows = result["results"]
    assert result["ok"] is True and len(rows) == len(references)
    for row in rows[:2]:
        assert row["verdict"] == "verified", row
        assert row["match"]["ref"] == "10.1073/pnas.1414271111"
    assert [row["verdict"] for row in rows[2:]] == ["uncertain"] * 4 + ["verified"]
    assert [row.get("error", {}).get("code") for row in rows[2:]] == [
        None, "INVALID_REF", "INVALID_REF", None, None,
    ]  # fmt: skip
    paths = [request.path for request in upstream.requests_to("api.crossref.org")]
    assert not any("members" in path for path in paths), paths
