"""Every ref the command line reads works over MCP, through the one parser; what the
spec's pattern kept out (control and invisible characters, '.'/'..' path parts,
over-long ids) stays out, with a message in words."""

from __future__ import annotations

from typing import Any

import pytest
from mcputil import call, mcp_session

from papersutil import NATURE, STUB_PDF, route_nature
from replay import ReplayUpstream

SICI = "10.1002/(SICI)1097-4636(199706)35:4<509::AID-JBM11>3.0.CO;2-#"
WIDE_FORMS: list[tuple[str, dict[str, str]]] = [
    ("hep-th/9901001", {"arxiv": "hep-th/9901001"}),
    ("math.GT/0309136v1", {"arxiv": "math.GT/0309136v1"}),
    ("2401.12345v2", {"arxiv": "2401.12345v2"}),
    ("arXiv:2401.12345", {"arxiv": "2401.12345"}),
    ("doi:10.1038/nature12373", {"doi": NATURE}),
    ("https://doi.org/10.1038/nature12373", {"doi": NATURE}),
    ("http://dx.doi.org/10.1038/NATURE12373", {"doi": NATURE}),
    ("https://arxiv.org/abs/1605.08386", {"arxiv": "1605.08386"}),
    ("https://arxiv.org/pdf/1605.08386v1", {"arxiv": "1605.08386v1"}),
    ("10.1023/a:1007154515475", {"doi": "10.1023/a:1007154515475"}),
    (SICI, {"doi": SICI.lower()}),
    (
        "https://doi.org/10.1002/%28SICI%291097-4636%28199706%2935%3A4%3C509",
        {"doi": "10.1002/(sici)1097-4636(199706)35:4<509"},
    ),
]
STILL_REFUSED = [
    "10.1234/ab\u202ecd",  # a bidi override
    "10.1234/a\u200bb",  # a zero-width space
    "10.1234/a\tb",
    "10.1234/a%0Ab",  # a control character, percent-encoded
    "10.1234/a/../b",
    "10.1234/./b",
    "https://doi.org/10.1234/%2E%2E/b",
    "10.1234/" + "a" * 249,
    "hep-th/99",
    "arXiv:../../etc/passwd",
]


async def test_every_form_the_command_line_reads_is_taken_over_mcp(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    async with mcp_session(doiget_env) as session:
        plans = [
            await call(session, "doiget_fetch_paper", {"ref": ref, "dry_run": True})
            for ref, _ in WIDE_FORMS
        ]
        missing = await call(session, "doiget_info", {"ref": "hep-th/9901001"})
        graph_args = await call(
            session, "doiget_expand_citation_graph", {"ref": "https://doi.org/10.1038/nature12373"}
        )
    assert [plan["ref"] for plan in plans] == [shape for _, shape in WIDE_FORMS]
    assert missing["error"]["code"] == "NOT_FOUND"  # read, then looked up: not INVALID_REF
    assert graph_args["error"]["code"] != "INVALID_REF"
    assert upstream.requests == []


@pytest.mark.parametrize("ref", STILL_REFUSED)
async def test_what_the_pattern_kept_out_stays_out_in_words(
    upstream: ReplayUpstream, doiget_env: dict[str, str], ref: str
) -> None:
    async with mcp_session(doiget_env) as session:
        single = await call(session, "doiget_fetch_paper", {"ref": ref})
        batch = await call(session, "doiget_batch_fetch", {"refs": [ref]})
    assert single["error"]["code"] == "INVALID_REF"
    message = single["error"]["message"]
    assert "Use a DOI" in message or "at most 256" in message
    assert "^(" not in message and "\\d" not in message  # no regular expression
    (row,) = batch["results"]
    assert row["ok"] is False and row["error"]["code"] == "INVALID_REF"
    assert upstream.requests == []


async def test_one_bad_ref_in_a_batch_fails_alone(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    upstream.fixture("arxiv.org", "/pdf/1605.08386v1", STUB_PDF)
    refs = [NATURE, "not a ref", "https://arxiv.org/abs/1605.08386", "10.1234/a/../b"]
    async with mcp_session(doiget_env) as session:
        batch = await call(session, "doiget_batch_fetch", {"refs": refs})
        plan = await call(session, "doiget_batch_fetch", {"refs": refs, "dry_run": True})
    rows: list[dict[str, Any]] = batch["results"]
    # A fetched row names the ref as read; a refused one, as given.
    assert [row["ref"] for row in rows] == [NATURE, "not a ref", "1605.08386", refs[3]]
    assert [row["ok"] for row in rows] == [True, False, True, False]
    assert rows[1]["error"]["code"] == rows[3]["error"]["code"] == "INVALID_REF"
    assert rows[1]["error"]["denial_context"] is None
    assert batch["summary"] == {"total": 4, "ok": 2, "failed": 2}
    # A plan names every bad ref at once and plans nothing.
    assert plan["error"]["code"] == "INVALID_REF"
    assert "'not a ref'" in plan["error"]["message"]
