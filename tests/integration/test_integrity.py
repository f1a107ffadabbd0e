"""A paper's retractions, concerns and corrections: recorded when it is resolved or
fetched, shown on every surface, and checked again later (recorded Crossref records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from integrityutil import (
    COCHRANE,
    EJOGRB,
    ERRATUM,
    EXPECTED,
    NEJM,
    SAID,
    WAKEFIELD,
    record,
    route_integrity,
    without_notices,
)

from doiget.config import load_settings
from doiget.contract import plain
from doiget.integrity import notices
from doiget.library.contracts import ChunkSearch
from doiget.library.documents import select
from doiget.library.service import Library
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from doiget.papers.store import Store, integrity_table, work_from_document
from doiget.reading import contracts as rc
from doiget.reading.service import Reader
from doiget.refs import parse_ref
from doiget.sources import crossref
from doiget.workpool import WorkPool

from papersutil import CROSSREF_DOWN, make_papers, read_toml
from replay import ReplayUpstream

PAPERS = (WAKEFIELD, NEJM, EJOGRB, ERRATUM)


def _shown(notices: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Notices without their check time (compared separately)."""
    if notices is None:
        return None
    return [{k: v for k, v in n.items() if k != "checked_at"} for n in notices]


@pytest.mark.parametrize("doi", [*PAPERS, COCHRANE])
def test_crossref_relations_are_read_once_into_normalised_notices(doi: str) -> None:
    work = crossref.parse_work(record(doi))
    found = notices(work)
    assert _shown(plain(found) if found else None) == EXPECTED.get(doi)
    assert work.retracted == (doi in (WAKEFIELD, NEJM))


async def test_every_papers_surface_shows_the_notices(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_integrity(upstream)
    papers = make_papers(doiget_env)
    try:
        stored = {
            doi: plain(await papers.metadata_only(c.PaperFetch(ref=doi)))
            for doi in (*PAPERS, COCHRANE)
        }
        fetched = plain(await papers.fetch(c.PaperFetch(ref=WAKEFIELD)))
        batch = plain(await papers.batch(c.BatchFetch(refs=[WAKEFIELD, NEJM])))
        info = {doi: plain(papers.info(c.PaperLookup(ref=doi))) for doi in (*PAPERS, COCHRANE)}
        listed = plain(papers.recent(c.RecentPapers(limit=20)))
        searched = plain(papers.search(c.LocalSearch(query="retracted")))
        bibtex = papers.bibtex(c.PaperExport(refs=list(PAPERS))).bibtex or ""
        csl = papers.csl(c.PaperExport(refs=list(PAPERS))).items or []
        ris = papers.ris(c.PaperExport(refs=list(PAPERS))).ris or ""
        apa = plain(papers.format_references(c.FormatReferences(refs=list(PAPERS))))
    finally:
        await papers.aclose()

    for doi in PAPERS:
        assert _shown(stored[doi]["integrity"]) == EXPECTED[doi], doi
        assert _shown(info[doi]["integrity"]) == EXPECTED[doi], doi
        assert all(n["checked_at"].endswith("Z") for n in info[doi]["integrity"])
    # A clean record (its only update is a new version) shows nothing at all.
    assert "integrity" not in stored[COCHRANE] and "integrity" not in info[COCHRANE]
    assert _shown(fetched["integrity"]) == EXPECTED[WAKEFIELD]
    rows = {row["ref"]: row for row in batch["results"]}
    assert _shown(rows[WAKEFIELD]["integrity"]) == EXPECTED[WAKEFIELD]
    # NEJM has no Open Access copy: its failed row is about the fetch, not the paper.
    assert rows[NEJM]["ok"] is False
    recent = {row["ref"]: row for row in listed["results"]}
    for doi in PAPERS:
        assert _shown(recent[doi]["integrity"]) == EXPECTED[doi]
    assert "integrity" not in recent[COCHRANE]
    hits = {row["ref"]: row for row in searched["results"]}
    assert set(hits) == {WAKEFIELD, NEJM}  # "RETRACTED:" in their titles
    assert _shown(hits[NEJM]["integrity"]) == EXPECTED[NEJM]

    items = {item["DOI"]: item for item in csl}
    entries = {ref["ref"]: ref["entry"] for ref in apa["references"]}
    for doi in PAPERS:
        assert SAID[doi] in items[doi]["note"]
        assert f"[{SAID[doi]}" in entries[doi]
        assert f"N1  - [{SAID[doi]}" in ris
    assert "Corrected (2004-03-06)" in items[WAKEFIELD]["note"]
    assert "Expression of concern (2020-06-02)" in items[NEJM]["note"]
    assert bibtex.count("note = {") == 4 and "note = {Retracted (2010-02-06), notice" in bibtex

    # The TOML keeps the notices, and the time Crossref was asked.
    document = read_toml(Path(info[EJOGRB]["metadata_path"]))
    table = document["doiget"]["integrity"]
    assert table["checked_at"].endswith("Z")
    assert table["notices"] == [
        {
            "kind": "expression_of_concern",
            "relation": "updated-by",
            "doi": "10.1016/j.ejogrb.2024.06.039",
            "date": "2024-08-01",
            "source": "publisher",
            "record_id": "70752",
        }
    ]
    assert read_toml(Path(info[COCHRANE]["metadata_path"]))["doiget"]["integrity"]["notices"] == []


def test_an_entry_without_the_table_reads_as_before(tmp_path: Path) -> None:
    store = Store(tmp_path)
    ref = parse_ref("10.1234/old")
    (tmp_path / ".metadata").mkdir()
    store.metadata_path(ref).write_text(
        'schema_version = "1.0"\ntitle = "Old"\ndoi = "10.1234/old"\n'
        '[doiget]\nref = "10.1234/old"\nretracted = true\n'
        "[doiget.integrity]\nnotices = [{relation = 1}, 5]\n"
    )
    entry = store.entry(ref)
    assert entry is not None
    work = entry.work
    assert work.title == "Old" and work.updates == () and work.integrity_checked is None
    assert integrity_table(work) is None
    assert work_from_document({"title": "x"}).integrity == ()


async def test_a_crossref_outage_never_hides_a_recorded_retraction(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_integrity(upstream)
    papers = make_papers(doiget_env)
    try:
        await papers.metadata_only(c.PaperFetch(ref=NEJM))
        upstream.route("api.crossref.org", f"/works/{NEJM}", CROSSREF_DOWN)
        upstream.json("api.unpaywall.org", f"/v2/{NEJM}", {"doi": NEJM, "is_oa": False})
        again = plain(await papers.metadata_only(c.PaperFetch(ref=NEJM)))
        info = plain(papers.info(c.PaperLookup(ref=NEJM)))
    finally:
        await papers.aclose()
    assert _shown(again["integrity"]) == EXPECTED[NEJM]
    assert _shown(info["integrity"]) == EXPECTED[NEJM]


@pytest.mark.parametrize("apart", [False, True], ids=["threads", "worker processes"])
async def test_passages_and_reading_show_the_papers_notices(
    upstream: ReplayUpstream, doiget_env: dict[str, str], apart: bool
) -> None:
    route_integrity(upstream)
    papers = make_papers(doiget_env)
    try:
        await papers.fetch(c.PaperFetch(ref=WAKEFIELD))
    finally:
        await papers.aclose()
    settings = load_settings(doiget_env)
    pool = WorkPool(2, 8, apart=apart)
    library = Library(settings, pool=pool)
    reader = Reader(settings)
    try:
        library.project("lab/x", create=True)
        selection = select(Store(settings.store_root), [WAKEFIELD])
        report = plain(await library.index_documents("lab/x", selection.documents))
        assert report["indexed"] == 1
        for hybrid in (False, True):
            request = ChunkSearch(project="lab/x", query="interactive reports", top_k=5)
            found = plain(await library.search(request, hybrid=hybrid))
            assert found["count"] >= 1
            for item in found["items"]:
                assert _shown(item["integrity"]) == EXPECTED[WAKEFIELD]
        outline = plain(await reader.read(rc.ReadPaper(ref=WAKEFIELD)))
        assert _shown(outline["integrity"]) == EXPECTED[WAKEFIELD]
        piece = plain(await reader.read(rc.ReadPaper(ref=WAKEFIELD, pages="1")))
        assert _shown(piece["integrity"]) == EXPECTED[WAKEFIELD]
    finally:
        await library.aclose()
        await reader.aclose()
        pool.close()


async def test_a_check_records_notices_that_came_later(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_integrity(upstream)
    # Stored when Crossref listed only the expression of concern.
    upstream.json("api.crossref.org", f"/works/{NEJM}", without_notices(NEJM, "retraction"))
    upstream.json(
        "api.crossref.org", f"/works/{EJOGRB}", without_notices(EJOGRB, "expression_of_concern")
    )
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    papers = make_papers(doiget_env)
    try:
        for doi in (NEJM, EJOGRB, WAKEFIELD):
            await papers.metadata_only(c.PaperFetch(ref=doi))
        await papers.metadata_only(c.PaperFetch(ref="arXiv:1605.08386"))
        before = plain(papers.info(c.PaperLookup(ref=NEJM)))
        assert [n["kind"] for n in before["integrity"]] == ["expression_of_concern"]
        assert "integrity" not in plain(papers.info(c.PaperLookup(ref=EJOGRB)))
        fetched_at = before["metadata"]["doiget"]["fetched_at"]

        # Now Crossref lists the retraction and the concern; Wakefield's record is down.
        route_integrity(upstream)
        upstream.route("api.crossref.org", f"/works/{WAKEFIELD}", CROSSREF_DOWN)
        seen: list[tuple[int, int]] = []
        report = plain(
            await papers.check_integrity(
                c.IntegrityCheck(), lambda done, total, row: seen.append((done, total))
            )
        )
        after = plain(papers.info(c.PaperLookup(ref=NEJM)))
        recent = {row["ref"]: row for row in plain(papers.recent(c.RecentPapers()))["results"]}
    finally:
        await papers.aclose()
    rows = {row["ref"]: row for row in report["results"]}
    assert (report["checked"], report["changed"], report["not_checked"], report["failed"]) == (
        2,
        2,
        1,
        1,
    )
    assert [n["kind"] for n in rows[NEJM]["new"]] == ["retraction"]
    assert _shown(rows[NEJM]["integrity"]) == EXPECTED[NEJM]
    assert _shown(rows[EJOGRB]["new"]) == EXPECTED[EJOGRB]
    assert rows["1605.08386"]["status"] == "not_checked"
    assert rows[WAKEFIELD]["status"] == "failed" and rows[WAKEFIELD]["error"]["code"]
    assert seen[-1] == (4, 4)
    # Recorded, with the time of the check; nothing else of the entry changed.
    assert _shown(after["integrity"]) == EXPECTED[NEJM]
    assert after["integrity"][0]["checked_at"] >= before["integrity"][0]["checked_at"]
    assert after["metadata"]["doiget"]["fetched_at"] == fetched_at
    assert after["metadata"]["doiget"]["retracted"] is True
    assert _shown(recent[NEJM]["integrity"]) == EXPECTED[NEJM]
    # The failed lookup kept what Wakefield's entry recorded.
    events = [
        row
        for row in read_rows(Path(doiget_env["DOIGET_LOG_PATH"]))
        if row["event"] == "integrity_check"
    ]
    assert {(row["ref"], row["result"]) for row in events} == {
        (NEJM, "ok"),
        (EJOGRB, "ok"),
        (WAKEFIELD, "err"),
    }
    assert json.dumps(report).count("checked_at") >= 3
