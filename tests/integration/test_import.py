"""Importing bibliographies through the replay upstream: each citation manager's export,
corrected, not found and uncertain entries, idempotence, the user's keys in BibTeX
export and passages, and ``fetch``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from importutil import (
    ATTENTION,
    BETTER_BIBTEX,
    BETTER_CSL,
    CLOSED,
    JABREF,
    MENDELEY,
    PAPERPILE,
    PNAS,
    ZOTERO_BIBTEX,
    ZOTERO_CSL,
    ZOTERO_RIS,
    csl_text,
    fabricated,
    route_library,
    snapshot,
    unreachable,
    with_file,
    wrong_year,
)

from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode
from doiget.importing.contracts import ImportBibliography, ImportReport
from doiget.importing.service import Importer
from doiget.library.documents import from_entry
from doiget.papers import contracts as pc
from doiget.refs import parse_ref
from doiget.verify.lookup import AnswerStore
from doiget.verify.service import Verifier

from papersutil import make_papers
from replay import ReplayUpstream

Progress = list[tuple[int, int, str]]


def _import(
    env: dict[str, str],
    text: str,
    *,
    folder: Path | None = None,
    fetch: bool = False,
    seen: Progress | None = None,
) -> ImportReport:
    async def run() -> ImportReport:
        papers = make_papers(env)
        answers = AnswerStore(Path(env["DOIGET_DATA_DIR"]) / "verify-answers")
        verifier = Verifier(papers.network, answers, env.get("DOIGET_EMAIL"))

        def progress(done: int, total: int, message: str) -> None:
            if seen is not None:
                seen.append((done, total, message))

        try:
            request = ImportBibliography(text=text, fetch=fetch)
            return await Importer(papers, verifier).run(request, folder=folder, progress=progress)
        finally:
            await papers.network.aclose()
            await papers.aclose()

    return anyio.run(run)


def _stored(env: dict[str, str], ref: str) -> dict[str, Any]:
    papers = make_papers(env)
    try:
        return tomllib.loads(papers.store.metadata_path(parse_ref(ref)).read_text("utf-8"))
    finally:
        papers.index.close()


def _place(folder: Path, relative: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"%PDF-1.4\n")
    return path


# name -> (text given the folder the export lies in, ref, key kept, the PDF its file
# field names (relative to the folder; None: it names none that exists))
def _exports(folder: Path) -> dict[str, tuple[str, str, str | None, Path | None]]:
    bbt = _place(folder, "Zotero/storage/8XK2J4QH/Makris et al. - 2014 - Developing.pdf")
    mendeley = _place(folder, "Mendeley Desktop/Vaswani et al. - 2017 - Attention.pdf")
    ris = _place(folder, "files/12/Makris et al. - 2014 - Developing.pdf")
    return {
        "Better BibTeX": (
            with_file(BETTER_BIBTEX, str(bbt)),
            PNAS,
            "makrisDevelopingFunctionalMusculoskeletal2014",
            bbt,
        ),
        "Zotero BibTeX, Windows path": (ZOTERO_BIBTEX, CLOSED, "adak_essential_2001", None),
        "JabRef": (JABREF, CLOSED, "Adak2001", _place(folder, "papers/Adak2001.pdf")),
        "Mendeley": (
            with_file(MENDELEY, str(mendeley).lstrip("/")),
            ATTENTION,
            "Vaswani2017",
            mendeley,
        ),
        "Paperpile": (
            PAPERPILE,
            ATTENTION,
            "Vaswani2017-ab",
            _place(folder, "All Papers/V/Vaswani et al. 2017 - Attention is all you need.pdf"),
        ),
        "Zotero RIS": (with_file(ZOTERO_RIS, ris.as_uri()), PNAS, None, ris),
        "Zotero CSL-JSON": (csl_text(ZOTERO_CSL), PNAS, None, None),
        "Better BibTeX CSL-JSON": (csl_text(BETTER_CSL), CLOSED, "adakEssentialRole2001", None),
    }


EXPORTS = [
    "Better BibTeX",
    "Zotero BibTeX, Windows path",
    "JabRef",
    "Mendeley",
    "Paperpile",
    "Zotero RIS",
    "Zotero CSL-JSON",
    "Better BibTeX CSL-JSON",
]


@pytest.mark.parametrize("name", EXPORTS)
def test_each_managers_export_is_stored_under_the_real_work_with_its_key(
    name: str, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_library(upstream)
    folder = tmp_path / "exports"
    text, ref, key, pdf = _exports(folder)[name]
    report = _import(doiget_env, text, folder=folder)
    [row] = report.results
    assert (row.status, row.ref, row.alias) == ("imported", ref, key), row
    stored = _stored(doiget_env, ref)
    assert stored["doiget"].get("aliases", {}).get("bib", []) == ([key] if key else [])
    files = [outcome for outcome in row.pdf or [] if outcome.source == "file"]
    if pdf is not None:
        [outcome] = files
        # The file is handed to the adder of local PDFs, which stores and identifies it.
        assert outcome.path == str(pdf) and outcome.ok is True
        assert (outcome.message or "").startswith(("added", "joined", "already_present"))
    elif name.startswith("Zotero BibTeX"):  # C:\Users\... names no file here
        [outcome] = files
        assert outcome.code == "NOT_FOUND" and "C:\\Users\\ada" in (outcome.message or "")
    else:
        assert files == []
    assert plain(report.counts)["imported"] == 1


def test_a_miscited_entry_is_corrected_and_stored_as_the_record_says(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    [row] = _import(doiget_env, wrong_year()).results
    assert (row.status, row.ref, row.alias) == ("corrected", PNAS, "makris2019"), row
    assert [(p.kind, p.cited, p.actual) for p in row.problems or []] == [
        ("year_differs", "2019", "2014")
    ]
    assert _stored(doiget_env, PNAS)["year"] == 2014


def test_not_found_and_uncertain_entries_are_listed_and_never_stored(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    report = _import(doiget_env, fabricated() + unreachable() + with_file(PAPERPILE, ""))
    lost, down, kept = report.results
    assert (lost.status, lost.key, lost.ref) == ("not_found", "gui2021", None), lost
    assert (down.status, down.key, down.ref) == ("uncertain", "tide2023", None), down
    assert down.note and "dblp failed" in down.note
    assert kept.status == "imported"
    counts = plain(report.counts)
    assert (counts["not_found"], counts["uncertain"], counts["imported"]) == (1, 1, 1)
    assert report.total == 3
    store = Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata"
    assert [path.name for path in store.glob("*.toml")] == ["arxiv_1706.03762.toml"]


def test_importing_twice_changes_nothing(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_library(upstream)
    text = BETTER_BIBTEX.replace("file = {{FILE}}", "") + JABREF + PAPERPILE + wrong_year()
    text += fabricated() + unreachable()
    first = _import(doiget_env, text, folder=tmp_path)
    store = snapshot(Path(doiget_env["DOIGET_STORE_ROOT"]))
    log = Path(doiget_env["DOIGET_LOG_PATH"]).read_bytes()
    asked = len(upstream.requests)
    second = _import(doiget_env, text, folder=tmp_path)
    assert snapshot(Path(doiget_env["DOIGET_STORE_ROOT"])) == store
    assert Path(doiget_env["DOIGET_LOG_PATH"]).read_bytes() == log
    assert [row.status for row in first.results] == [
        "imported", "imported", "imported", "corrected", "not_found", "uncertain"
    ]  # fmt: skip
    assert [row.status for row in second.results] == [
        "already_present", "already_present", "already_present", "corrected", "not_found",
        "uncertain",
    ]  # fmt: skip
    again = upstream.requests[asked:]
    assert {request.host for request in again} == {"dblp.org"}  # only the failed check


def test_the_users_key_is_the_bibtex_key_and_the_passages_citekey(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    text = BETTER_BIBTEX.replace("file = {{FILE}}", "") + wrong_year()
    _import(doiget_env, text)
    papers = make_papers(doiget_env)
    try:
        bibtex = papers.bibtex(pc.PaperExport(refs=[PNAS])).bibtex
        entry = papers.store.entry(parse_ref(PNAS))
    finally:
        papers.index.close()
    assert "@article{makrisDevelopingFunctionalMusculoskeletal2014," in bibtex
    assert entry is not None
    assert entry.document["doiget"]["aliases"]["bib"] == [
        "makrisDevelopingFunctionalMusculoskeletal2014",
        "makris2019",
    ]
    assert from_entry(entry).citekey == "makrisDevelopingFunctionalMusculoskeletal2014"


def test_fetch_gets_the_open_access_pdfs_under_the_batch_and_reports_the_rest(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    served = route_library(upstream)
    seen: Progress = []
    text = with_file(PAPERPILE, "") + JABREF.replace("file      = {:papers/Adak2001.pdf:PDF},", "")
    report = _import(doiget_env, text, fetch=True, seen=seen)
    attention, closed = report.results
    [got] = [outcome for outcome in attention.pdf or [] if outcome.source != "file"]
    assert (got.source, got.ok) == ("open_access", True), got
    assert got.path is not None and Path(got.path).read_bytes() == served
    [missing] = closed.pdf or []
    assert (missing.source, missing.ok, missing.code) == ("open_access", False, "NO_OA_AVAILABLE")
    assert [done for done, _, _ in seen] == list(range(1, 7))  # 2 checks, 2 stores, 2 fetches
    assert seen[-1][1] == 6 and "fetched" in seen[-1][2]
    again = _import(doiget_env, text, fetch=True)
    stored = [(p.source, p.ok) for p in again.results[0].pdf or [] if p.source != "file"]
    assert stored == [("store", True)]


def test_two_entries_of_one_work_store_it_once_and_keep_both_keys(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    report = _import(doiget_env, MENDELEY.replace("{FILE}", "x.pdf") + PAPERPILE)
    assert [(row.status, row.ref) for row in report.results] == [
        ("imported", ATTENTION), ("already_present", ATTENTION)
    ]  # fmt: skip
    assert _stored(doiget_env, ATTENTION)["doiget"]["aliases"]["bib"] == [
        "Vaswani2017",
        "Vaswani2017-ab",
    ]
    log = Path(doiget_env["DOIGET_LOG_PATH"]).read_text("utf-8").splitlines()
    events = [json.loads(line)["event"] for line in log]
    assert events.count("resolve") == events.count("metadata_only") == 1  # stored once
    assert events.count("store_write") == 2  # a row for each key kept


def test_over_mcp_a_file_field_is_reported_not_read(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_library(upstream)
    _place(tmp_path, "papers/Adak2001.pdf")
    [row] = _import(doiget_env, JABREF, folder=None).results
    [outcome] = row.pdf or []
    assert outcome.ok is False and outcome.path is None
    assert "doiget import" in (outcome.message or "")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Vaswani A. Attention is all you need. NeurIPS 2017.", "not a BibTeX"),
        ("% only a comment\n", "not a BibTeX"),
        ("[]", "no entry"),
        ("".join(f"@article{{k{i}, title={{T{i}}}}}\n" for i in range(101)), "101 references"),
    ],
)
def test_unusable_text_is_refused_before_anything_is_asked(
    text: str, said: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    with pytest.raises(DoigetError) as refused:
        _import(doiget_env, text)
    assert refused.value.code is ErrorCode.INVALID_REF
    assert said in refused.value.message
    assert upstream.requests == []
