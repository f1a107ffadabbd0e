"""Importing bibliographies through the replay upstream: each citation manager's export,
corrected, not found and uncertain entries, idempotence, the user's keys in BibTeX
export and passages, and ``fetch``."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from importutil import (
    ATTENTION,
    BETTER_BIBTEX,
    BETTER_CSL,
    CLOSED,
    FABRICATED,
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
from doiget.importing.contracts import ImportBibliography, ImportReport, PdfOutcome
from doiget.importing.service import Importer
from doiget.library.documents import from_entry
from doiget.papers import contracts as pc
from doiget.refs import parse_ref
from doiget.verify.lookup import AnswerStore
from doiget.verify.service import Verifier

from papersutil import make_papers
from pdfmaker import one_page_pdf
from replay import ReplayUpstream

# Requests spaced by no gap: this module's subject is the rows an import gives, and its
# sources are asked once or more an entry (see tests/pacing.py).
pytestmark = pytest.mark.usefixtures("unpaced")

Progress = list[tuple[int, int, str]]


def _import(
    env: dict[str, str],
    text: str,
    *,
    folder: Path | None = None,
    fetch: bool = False,
    seen: Progress | None = None,
    add_pdf: Callable[[Path], Awaitable[PdfOutcome]] | None = None,
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
            importer = Importer(papers, verifier, add_pdf)
            return await importer.run(request, folder=folder, progress=progress)
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
    path.write_bytes(one_page_pdf(b""))  # a PDF PDFium opens: an unreadable one is refused
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
        "already_present", "already_present", "already_present", "already_present",
        "not_found", "uncertain",
    ]  # fmt: skip
    # The store is as the first import left it; the file still says what it says.
    assert second.results[3].problems == first.results[3].problems
    assert [p.kind for p in second.results[3].problems or []] == ["year_differs"]
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
        ("".join(f"@article{{k{i}, title={{T{i}}}}}\n" for i in range(101)), "more than 100"),
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


def _statuses(report: ImportReport) -> list[tuple[str | None, str]]:
    return [(row.key, row.status) for row in report.results]


def test_an_entry_imported_again_is_already_present_whatever_it_says(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    miscited = _import(doiget_env, wrong_year())
    assert _statuses(miscited) == [("makris2019", "corrected")]
    again = _import(doiget_env, wrong_year())
    [row] = again.results
    assert (row.status, row.ref, row.alias) == ("already_present", PNAS, "makris2019")
    assert [(p.kind, p.cited) for p in row.problems or []] == [("year_differs", "2019")]
    matching = BETTER_BIBTEX.replace("file = {{FILE}}", "")
    assert _statuses(_import(doiget_env, matching))[0][1] == "already_present"
    # The user edits the entry: a new key and another wrong year. The work is present;
    # the new key is kept (a store row), the differences listed, the status unchanged.
    edited = wrong_year().replace("makris2019", "makrisEdited").replace("2019", "2020")
    [row] = _import(doiget_env, edited).results
    assert (row.status, row.alias) == ("already_present", "makrisEdited")
    assert [(p.kind, p.cited) for p in row.problems or []] == [("year_differs", "2020")]
    assert _stored(doiget_env, PNAS)["doiget"]["aliases"]["bib"] == [
        "makris2019",
        "makrisDevelopingFunctionalMusculoskeletal2014",
        "makrisEdited",
    ]
    assert _stored(doiget_env, PNAS)["year"] == 2014


def _report_adds_up(report: ImportReport) -> None:
    counts = plain(report.counts)
    assert sum(counts.values()) == report.total == len(report.results)
    for status, count in counts.items():
        assert count == sum(row.status == status for row in report.results)


def test_every_entry_sharing_one_key_gets_its_row_and_only_the_first_keeps_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    paperpile = with_file(PAPERPILE, "")
    same = [paperpile.replace("Vaswani2017-ab", key) for key in ("dup", "dup", "DUP", "Dup")]
    lost = [fabricated().replace("gui2021", "dup") for _ in range(3)]
    report = _import(doiget_env, "".join(same + lost))
    _report_adds_up(report)
    assert _statuses(report) == [
        ("dup", "imported"), ("dup", "already_present"), ("DUP", "already_present"),
        ("Dup", "already_present"), ("dup", "not_found"), ("dup", "not_found"),
        ("dup", "not_found"),
    ]  # fmt: skip
    assert [row.alias for row in report.results[:4]] == ["dup", None, None, None]
    for row in report.results[1:4]:
        assert row.note and "line 1 has that key already" in row.note, row
    assert _stored(doiget_env, ATTENTION)["doiget"]["aliases"]["bib"] == ["dup"]


def test_entries_the_reader_cannot_read_whole_are_rows_that_say_where(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_library(upstream)
    paperpile = with_file(PAPERPILE, "")
    text = (
        "@comment{jabref-meta: databaseType:bibtex;}\n"
        '@preamble{"\\newcommand{\\noopsort}[1]{}"}\n'
        + paperpile.replace("Vaswani2017-ab", "braced{key}")
        + "@article{broken,\n  title = {Never closed,\n  year = {2001}\n\n"
        + paperpile.replace("@ARTICLE{Vaswani2017-ab", "@misc(in parens").replace(
            'Attention is all you need.pdf"\n}', 'Attention is all you need.pdf"\n)'
        )
        + "@article{, title = {"
        + FABRICATED
        + "}, year = 2021}\n"
        + "@article{title = {"
        + FABRICATED
        + "}, year = 2021}\n"
        + "@article{bad, title = {"
        + FABRICATED
        + "} year = 2021}\n"
        + paperpile.replace("Vaswani2017-ab", "M\u00fcller2017")
    )
    report = _import(doiget_env, text)
    _report_adds_up(report)
    assert _statuses(report) == [
        ("braced{key}", "imported"),
        ("broken", "unreadable"),
        ("in parens", "already_present"),
        (None, "not_found"),
        (None, "not_found"),
        ("bad", "unreadable"),
        ("M\u00fcller2017", "already_present"),
    ]
    braced, broken, parens, _, _, bad, unicode = report.results
    assert braced.alias is None and "not kept: BibTeX cannot cite it" in (braced.note or "")
    assert parens.alias is None and "not kept" in (parens.note or "")
    assert unicode.alias == "M\u00fcller2017"
    assert broken.note and "entry at line 15" in broken.note
    assert "a brace opened here is never closed (line 16)" in broken.note
    assert bad.note and "comma" in bad.note and "line" in bad.note


def test_an_entry_adds_at_most_its_first_pdfs_and_says_how_many_more(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    from doiget.importing.contracts import MAX_FILES_PER_ENTRY

    route_library(upstream)
    added: list[Path] = []

    async def adder(path: Path) -> PdfOutcome:
        added.append(path)
        return PdfOutcome(source="file", ok=True, path=str(path))

    for index in range(1800):  # an 18 KB field: the entry stays within its size
        _place(tmp_path, f"p{index}.pdf")
    listed = ";".join(f"p{index}.pdf" for index in range(1800))
    written = "All Papers/V/Vaswani et al. 2017 - Attention is all you need.pdf"
    text = with_file(PAPERPILE, "").replace(written, f"{listed};p0.pdf")
    [row] = _import(doiget_env, text, folder=tmp_path, add_pdf=adder).results
    outcomes = row.pdf or []
    assert len(added) == MAX_FILES_PER_ENTRY == len(outcomes) - 1
    assert outcomes[-1].ok is False and outcomes[-1].message
    assert outcomes[-1].message.startswith(f"{1800 - MAX_FILES_PER_ENTRY} more PDFs listed")
