"""Adding local PDFs through the replay upstream: every identification path, the ways
identification must fail, duplicates, joins, and the folders a caller may add from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from addpdfutil import (
    PNAS,
    PNAS_AUTHORS,
    PNAS_TITLE,
    add_pdfs,
    built_cases,
    fixture_cases,
    route_sources,
)

from pdfmaker import write_paper_pdf
from replay import ReplayUpstream

# Built once at collection, in a temp folder: each test copies its PDF out.
_BUILT = Path(__import__("tempfile").mkdtemp(prefix="doiget-add-"))


def _rows(log: Path, event: str) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return [row for row in rows if row["event"] == event]


@pytest.mark.parametrize("case", built_cases(_BUILT), ids=lambda c: c.name)
def test_each_way_a_pdf_names_its_work_identifies_it_or_leaves_it_unidentified(
    case: object, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    from addpdfutil import Case

    assert isinstance(case, Case)
    route_sources(upstream)
    fresh = write_copy(case.path, tmp_path)
    row = add_pdfs(doiget_env, [fresh]).results[0]
    assert row.ok, row
    if case.expected is None:
        assert row.identified is False and row.ref and row.ref.startswith("local:")
        assert row.read is not None and row.read.title
    else:
        assert row.identified and row.ref == case.expected.removeprefix("arxiv:"), row
        assert row.status == "added" and row.citekey and row.pdf_added


def write_copy(path: Path, folder: Path) -> Path:
    target = folder / "in" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(path.read_bytes())
    return target


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda c: c.name)
def test_fixture_pdfs_no_source_holds_stay_unidentified(
    case: object, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_sources(upstream)
    row = add_pdfs(doiget_env, [case.path]).results[0]  # type: ignore[attr-defined]
    assert row.ok and row.identified is False, row


def test_an_identified_pdf_is_a_full_entry_with_one_provenance_row(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    pdf = write_paper_pdf(tmp_path / "mine.pdf", PNAS_TITLE, PNAS_AUTHORS, xmp_doi=PNAS)
    before = pdf.read_bytes()
    row = add_pdfs(doiget_env, [pdf]).results[0]
    assert row.ref == PNAS and row.identified_by == "pdf-metadata" and row.evidence == PNAS
    assert pdf.read_bytes() == before  # never changed, never moved
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    assert (store / "doi_10.1073_pnas.1414271111.pdf").read_bytes() == before
    toml = (store / ".metadata/doi_10.1073_pnas.1414271111.toml").read_text()
    assert "Makris" in toml and 'pdf_source = "local-file"' in toml and row.sha256 in toml
    (add,) = _rows(Path(doiget_env["DOIGET_LOG_PATH"]), "add")
    assert add["source"] == "local-file" and add["sha256"] == row.sha256 and add["ref"] == PNAS
    assert "identified by pdf-metadata" in str(add["detail"])
    assert not list(store.glob(".doiget-*.part"))


def test_the_same_file_twice_is_one_entry_and_another_copy_of_the_work_joins_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    first = write_paper_pdf(tmp_path / "a.pdf", PNAS_TITLE, PNAS_AUTHORS, xmp_doi=PNAS)
    other = write_paper_pdf(tmp_path / "b.pdf", PNAS_TITLE, PNAS_AUTHORS, page_doi=PNAS)
    rows = [*add_pdfs(doiget_env, [first]).results, *add_pdfs(doiget_env, [first, other]).results]
    statuses = [(row.status, row.ref, row.pdf_added) for row in rows]
    assert statuses == [("added", PNAS, True), ("already_present", PNAS, False),
                        ("joined", PNAS, False)]  # fmt: skip
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    assert (store / "doi_10.1073_pnas.1414271111.pdf").read_bytes() == first.read_bytes()
    assert len(list((store / ".metadata").glob("*.toml"))) == 1
    unknown = write_paper_pdf(tmp_path / "u.pdf", "Untitled Musings on Nothing", ["Ann Other"])
    twice = [*add_pdfs(doiget_env, [unknown]).results, *add_pdfs(doiget_env, [unknown]).results]
    assert [r.status for r in twice] == ["added", "already_present"]
    assert twice[0].ref == twice[1].ref == f"local:{twice[0].sha256}"


def test_a_pdf_joins_a_metadata_only_entry_and_gives_it_its_pdf(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    from cliutil import doiget

    route_sources(upstream)
    assert doiget("metadata", PNAS, env=doiget_env).returncode == 0
    pdf = write_paper_pdf(tmp_path / "a.pdf", PNAS_TITLE, PNAS_AUTHORS, page_doi=PNAS)
    row = add_pdfs(doiget_env, [pdf]).results[0]
    assert (row.status, row.ref, row.pdf_added) == ("joined", PNAS, True)
    shown = json.loads(doiget("--json", "info", PNAS, env=doiget_env).stdout)
    assert shown["pdf_path"] and shown["metadata"]["doiget"]["sha256"] == row.sha256


def test_an_unidentified_pdf_is_stored_indexable_and_says_so_when_cited(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    from cliutil import doiget

    route_sources(upstream)
    pdf = write_paper_pdf(tmp_path / "u.pdf", "Untitled Musings on Nothing", ["Ann Other"])
    row = add_pdfs(doiget_env, [pdf]).results[0]
    assert row.read is not None and row.read.authors == ["Ann Other"]
    bib = doiget("bib", str(row.ref), env=doiget_env).stdout
    assert "Unidentified local PDF" in bib and "Untitled Musings on Nothing" in bib
    csl = json.loads(doiget("--json", "csl", str(row.ref), env=doiget_env).stdout)
    assert "Unidentified" in csl["items"][0]["note"]
    found = json.loads(doiget("--json", "search", "musings", env=doiget_env).stdout)
    assert [hit["ref"] for hit in found["results"]] == [row.ref]
    fetch = doiget("--json", "fetch", str(row.ref), env=doiget_env)
    assert json.loads(fetch.stdout)["error"]["code"] == "INVALID_REF"


def test_paths_outside_the_allowed_folders_and_links_leading_out_are_refused(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    secret = write_paper_pdf(outside / "s.pdf", PNAS_TITLE, PNAS_AUTHORS)
    (allowed / "link.pdf").symlink_to(secret)
    (allowed / "dirlink").symlink_to(outside)
    inside = write_paper_pdf(allowed / "ok.pdf", "Untitled Musings on Nothing", ["Ann Other"])
    paths = [secret, allowed / "link.pdf", allowed / "dirlink" / "s.pdf", outside, inside]
    result = add_pdfs(doiget_env, paths, allowed=[allowed])
    refused = [row for row in result.results if not row.ok]
    assert len(refused) == 4 and result.results[-1].ok
    for row in refused:
        assert row.error is not None and row.error.code == "CAPABILITY_DENIED"
        assert "DOIGET_IMPORT_DIRS" in row.error.message and "roots" in row.error.message
    # A folder walked inside the roots skips nothing silently: its link out is refused too.
    walked = add_pdfs(doiget_env, [allowed], allowed=[allowed]).results
    assert {(Path(r.path).name, r.ok) for r in walked} == {("link.pdf", False), ("ok.pdf", True)}
    added = _rows(Path(doiget_env["DOIGET_LOG_PATH"]), "add")
    assert [str(row["detail"]).split(":")[0] for row in added] == ["ok.pdf", "ok.pdf"]


def test_a_refusal_tells_a_caller_over_http_no_path_of_the_server(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    from doiget.owner import owned_by

    route_sources(upstream)
    allowed, outside = tmp_path / "imports-folder", tmp_path / "elsewhere"
    allowed.mkdir()
    outside.mkdir()
    secret = write_paper_pdf(outside / "s.pdf", PNAS_TITLE, PNAS_AUTHORS)
    (allowed / "link.pdf").symlink_to(secret)
    with owned_by("a1b2c3d4e5f6"):
        result = add_pdfs(doiget_env, [allowed / "link.pdf"], allowed=[allowed])
    [row] = result.results
    assert row.error is not None and row.error.code == "CAPABILITY_DENIED"
    assert "imports-folder" not in row.error.message.replace(str(allowed / "link.pdf"), "")
    assert "elsewhere" not in row.error.message and "DOIGET_IMPORT_DIRS" in row.error.message


def test_a_file_that_is_not_a_pdf_or_is_missing_fails_alone(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    text = tmp_path / "notes.pdf"
    text.write_text("not a pdf")
    good = write_paper_pdf(tmp_path / "g.pdf", "Untitled Musings on Nothing", ["Ann Other"])
    result = add_pdfs(doiget_env, [text, tmp_path / "missing.pdf", good])
    codes = [row.error.code if row.error else "ok" for row in result.results]
    assert codes == ["INVALID_REF", "NOT_FOUND", "ok"]
    assert result.summary.failed == 2 and result.summary.unidentified == 1
    assert os.path.exists(text)
