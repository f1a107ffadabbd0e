"""``doiget audit`` on real drafts, the real program end to end: the draft read, every
cited work verified, each sentence weighed against what it cites, three reports written
(the drafts and their works: draftsutil).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from draftsutil import (
    CITATIONS,
    GLACIERS,
    WORKS,
    docx_draft,
    latex_draft,
    markdown_draft,
    pdf_draft,
    route_works,
    work_of_key,
)

from cliutil import doiget
from replay import ReplayUpstream

# An audit loads the encoder and reads a 20-page PDF: minutes on a loaded 2-core machine.
SLOW = 600


def _outside_links(page: str) -> list[str]:
    """Every http(s) address the page loads or links to, but anchors to DOI and arXiv."""
    attributes = re.findall(
        r"""\b(?:src|href|action|poster|data|srcset)\s*=\s*["']([^"']+)""", page
    )
    styles = re.findall(r"""(?:url\(|@import)\s*["']?\s*([^"')\s;]+)""", page)
    anchors = set(re.findall(r"""<a\b[^>]*\bhref\s*=\s*["']([^"']+)""", page))
    return [
        address
        for address in attributes + styles
        if re.match(r"(?i)\s*(https?:)?//", address)
        and not (address in anchors and re.match(r"https://(doi|arxiv)\.org/", address))
    ]


@pytest.mark.parametrize(
    "write",
    [latex_draft, markdown_draft, docx_draft, pdf_draft],
    ids=["latex", "markdown", "docx", "pdf"],
)
def test_every_citation_of_a_draft_is_accounted_for_in_three_reports(
    write: Any,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    tmp_path: Path,
) -> None:
    route_works(upstream, doiget_env)
    folder = tmp_path / "paper"
    folder.mkdir()
    draft = write(folder)
    md, html = tmp_path / "out" / "report.md", tmp_path / "out" / "report.html"
    ran = doiget("audit", str(draft), "--json", "--md", str(md), "--html", str(html),
                 env=doiget_env, timeout=SLOW)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["ok"] is True and report["partial"] is False, report
    summary = report["summary"]
    assert summary["citations"] == len(report["citations"]) == CITATIONS, report["citations"]
    assert summary["cited_works"] == 4
    assert (summary["not_real"], summary["retracted"]) == (1, 1), summary
    assert all(citation["checked"] for citation in report["citations"])
    assert [c["index"] for c in report["citations"]] == list(range(1, CITATIONS + 1))

    seen: dict[str, list[dict[str, Any]]] = {}
    for citation in report["citations"]:
        assert citation["sentence"] and citation["place"]["file"].endswith(draft.name)
        assert citation["place"].get("line") or citation["place"].get("page")
        for key in citation["keys"]:
            seen.setdefault(work_of_key(key["key"]), []).append({**key, "at": citation})
    assert set(seen) == set(WORKS), seen.keys()

    [wakefield] = seen["wakefield"]
    assert wakefield["at"]["status"] == "retracted"
    assert {notice["kind"] for notice in wakefield["integrity"]} >= {"retraction"}
    [ghost] = seen["ghost"]
    assert ghost["verdict"] == "not_found" and ghost["at"]["status"] == "not_real"
    for longeval in seen["longeval"]:
        assert longeval["verdict"] == "verified", longeval
        assert longeval["work"]["basis"] == "full_text"
    stated = seen["longeval"][0]
    assert stated["work"]["addressed"] in ("addressed", "partly"), stated
    best = stated["work"]["evidence"][0]
    assert best["page"] == 4 and "54%" in best["text"], best
    for makris in seen["makris"]:
        assert makris["verdict"] == "verified" and makris["work"]["basis"] == "abstract", makris
    crosslinks = seen["makris"][0]["work"]
    assert crosslinks["addressed"] in ("addressed", "partly"), crosslinks
    assert crosslinks["evidence"][0]["start"] is not None

    assert md.read_text().startswith(f"# Citation audit of {draft.name}")
    page = html.read_text()
    assert page.startswith("<!doctype html>")
    assert all(f'id="c{n}"' in page for n in range(1, CITATIONS + 1))
    assert _outside_links(page) == [], _outside_links(page)
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert GLACIERS.lower() in page.lower()
