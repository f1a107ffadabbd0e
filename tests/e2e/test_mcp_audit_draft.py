"""An agent audits a LaTeX draft in its client's roots with doiget_audit_manuscript: the
spawned server reads the draft and its .bib, verifies each cited work, weighs each
sentence, and reports progress as it goes (the drafts and their works: draftsutil)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from draftsutil import CITATIONS, WORKS, latex_draft, route_works, work_of_key
from mcp.client.session import ClientSession
from mcputil import with_roots

from replay import ReplayUpstream


async def test_a_draft_in_the_roots_is_audited_with_progress_notifications(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_works(upstream, doiget_env)
    root = tmp_path / "thesis"
    root.mkdir()
    draft = latex_draft(root)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def work(session: ClientSession) -> Any:
        return await session.call_tool(
            "doiget_audit_manuscript", {"path": str(draft)}, progress_callback=on_progress
        )

    result = await with_roots(doiget_env, [root], work)
    report = result.structured_content
    assert report is not None and report["ok"] is True and not result.is_error, report
    summary = report["summary"]
    assert summary["citations"] == len(report["citations"]) == CITATIONS
    assert (summary["cited_works"], summary["not_real"], summary["retracted"]) == (4, 1, 1)
    alone = {  # the citations of one work: its status and the basis it was weighed on
        work_of_key(key["key"]): (citation["status"], key.get("work", {}).get("basis"))
        for citation in report["citations"]
        if len(citation["keys"]) == 1
        for key in citation["keys"]
    }
    assert set(alone) == set(WORKS)
    assert alone["longeval"][1] == "full_text" and alone["makris"][1] == "abstract", alone
    assert (alone["wakefield"][0], alone["ghost"][0]) == ("retracted", "not_real"), alone
    # One notification per cited work verified and per citation checked, in order.
    total = float(len(WORKS) + CITATIONS)
    assert [done for done, _, _ in seen] == [float(n) for n in range(1, len(seen) + 1)]
    assert seen and seen[-1][0] == total and {t for _, t, _ in seen} == {total}
    assert all(message for _, _, message in seen)
