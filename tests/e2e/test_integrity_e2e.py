"""Retractions, concerns and corrections over MCP and the command line: stored from
Crossref's recorded records, shown by info, search_local, find_chunks and
format_references, and checked again with ``doiget integrity --check``."""

from __future__ import annotations

import json

from integrityutil import (
    EJOGRB,
    ERRATUM,
    EXPECTED,
    NEJM,
    SAID,
    WAKEFIELD,
    route_integrity,
    without_notices,
)
from mcputil import call, mcp_session

from cliutil import doiget
from replay import ReplayUpstream

PAPERS = (WAKEFIELD, NEJM, EJOGRB, ERRATUM)


def _shown(notices: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in n.items() if k != "checked_at"} for n in notices]


async def test_an_agent_sees_each_papers_notices_at_every_step(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_integrity(upstream)
    assert doiget("fetch", WAKEFIELD, env=doiget_env).returncode == 0
    for doi in PAPERS[1:]:
        stored = doiget("metadata", doi, env=doiget_env)
        assert stored.returncode == 0, stored.stderr
    indexed = doiget("index", "--all", "--json", env=doiget_env)
    assert indexed.returncode == 0 and json.loads(indexed.stdout)["indexed"] == 1

    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        for doi in PAPERS:
            info = await call(session, "doiget_info", {"ref": doi})
            assert _shown(info["integrity"]) == EXPECTED[doi], doi
        found = await call(session, "doiget_search_local", {"query": "covid"})
        assert [hit["ref"] for hit in found["results"]] == [NEJM]
        assert _shown(found["results"][0]["integrity"]) == EXPECTED[NEJM]
        passages = await call(
            session, "find_chunks", {"project": "doiget/papers", "query": "interactive charts"}
        )
        assert passages["count"] >= 1
        assert all(_shown(p["integrity"]) == EXPECTED[WAKEFIELD] for p in passages["items"])
        cited = await call(
            session, "doiget_format_references", {"refs": list(PAPERS), "style": "apa"}
        )
        entries = {ref["ref"]: ref["entry"] for ref in cited["references"]}
        for doi in PAPERS:
            assert f"[{SAID[doi]}" in entries[doi], entries[doi]

    shown = doiget("info", NEJM, env=doiget_env)
    assert shown.returncode == 0 and "retraction 2020-06-04" in shown.stdout


def test_integrity_check_reports_notices_that_came_later(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_integrity(upstream)
    upstream.json("api.crossref.org", f"/works/{NEJM}", without_notices(NEJM, "retraction"))
    assert doiget("metadata", NEJM, env=doiget_env).returncode == 0
    assert doiget("metadata", EJOGRB, env=doiget_env).returncode == 0
    route_integrity(upstream)

    checked = doiget("integrity", "--check", "--json", env=doiget_env)
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert (report["checked"], report["changed"], report["failed"]) == (2, 1, 0)
    rows = {row["ref"]: row for row in report["results"]}
    assert rows[NEJM]["status"] == "new_notices"
    assert [n["kind"] for n in rows[NEJM]["new"]] == ["retraction"]
    assert rows[EJOGRB]["status"] == "unchanged" and "new" not in rows[EJOGRB]

    text = doiget("integrity", env=doiget_env)  # what is recorded, no request sent
    assert text.returncode == 0, text.stderr
    assert "retraction 2020-06-04 10.1056/nejmc2021225" in text.stdout
    assert "2 stored paper(s) with notices" in text.stdout
