"""One bad file never takes the library down, and no read leaves the store.

The store holds one good paper beside every kind of unreadable metadata file (not
UTF-8, not TOML, cut short, a schema_version of the wrong type, a directory, an
oversized file, a link out of the store, a chain of links out of it) and every
kind of PDF doiget must not serve (a link to a real PDF outside, a chain of links to
a secret, a text file named .pdf, a directory). Each surface of the papers core
lists what it can, says what it cannot, and never returns a byte from outside.
"""

from __future__ import annotations

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.health import check_health
from doiget.library.documents import select
from doiget.papers import contracts as c
from doiget.papers.service import Papers
from doiget.papers.store import Store
from doiget.runtime import load_runtime
from doiget.server.papers_tools import PapersTools

from papersutil import make_papers
from storeedges import (
    BAD_METADATA,
    BAD_PDFS,
    GOOD_DOI,
    GOOD_KEY,
    ODD_TYPES,
    SECRET,
    StockedStore,
    doi,
    key,
)


@pytest.fixture
def papers(stocked_env: dict[str, str]) -> Papers:
    return make_papers(stocked_env)


LISTED = {GOOD_DOI, doi(ODD_TYPES), *(doi(kind) for kind in BAD_PDFS)}


def test_search_recent_and_reindex_list_every_readable_entry_and_only_those(
    papers: Papers, caplog: pytest.LogCaptureFixture
) -> None:
    recent = papers.recent(c.RecentPapers(limit=100))
    assert {hit.ref for hit in recent.results} == LISTED
    found = papers.search(c.LocalSearch(query="thermometry"))
    assert [hit.ref for hit in found.results] == [GOOD_DOI]
    assert papers.search(c.LocalSearch(query="oddtypes")).count == 1
    for kind in BAD_METADATA:
        assert papers.search(c.LocalSearch(query=kind)).count == 0, kind
    assert papers.reindex().total == len(LISTED)
    warned = caplog.text
    assert all(f"{key(kind)}.toml" in warned for kind in BAD_METADATA)


def test_a_listed_pdf_is_only_one_doiget_serves(papers: Papers) -> None:
    with_pdf = {hit.ref for hit in papers.recent(c.RecentPapers(limit=100)).results if hit.has_pdf}
    assert with_pdf == {GOOD_DOI}


@pytest.mark.parametrize("kind", BAD_METADATA)
def test_info_of_an_unreadable_entry_is_a_store_error_naming_its_file(
    papers: Papers, kind: str
) -> None:
    with pytest.raises(DoigetError) as raised:
        papers.info(c.PaperLookup(ref=doi(kind)))
    assert raised.value.code is ErrorCode.STORE_ERROR
    assert f"{key(kind)}.toml" in raised.value.message
    assert "delete it" in raised.value.message or "fix the hand edit" in raised.value.message


@pytest.mark.parametrize("kind", ["linkout", "linkchain"])
def test_a_linked_metadata_file_is_refused_for_what_it_is(papers: Papers, kind: str) -> None:
    with pytest.raises(DoigetError) as raised:
        papers.info(c.PaperLookup(ref=doi(kind)))
    assert "symbolic link" in raised.value.message and "outside" in raised.value.message


@pytest.mark.parametrize("kind", BAD_PDFS)
def test_a_pdf_doiget_must_not_serve_is_refused_and_never_reported_as_stored(
    papers: Papers, kind: str
) -> None:
    info = papers.info(c.PaperLookup(ref=doi(kind)))
    assert info.pdf_path is None
    with pytest.raises(DoigetError) as raised:
        papers.pdf_path(c.PaperLookup(ref=doi(kind)))
    assert raised.value.code is ErrorCode.STORE_ERROR
    assert f"{key(kind)}.pdf" in raised.value.message
    assert SECRET.decode() not in raised.value.message


def test_the_good_entry_is_untouched(papers: Papers, stocked: StockedStore) -> None:
    located = papers.pdf_path(c.PaperLookup(ref=GOOD_DOI))
    assert located.path == str(stocked.root / f"{GOOD_KEY}.pdf")
    assert papers.info(c.PaperLookup(ref=GOOD_DOI)).pdf_path == located.path


def test_health_counts_and_names_the_unreadable_files(stocked_env: dict[str, str]) -> None:
    report = check_health(load_runtime(stocked_env).settings, library=True)
    assert report["ok"] is True
    assert report["unreadable_entries"] == len(BAD_METADATA)
    named = [line.split(":", 1)[0] for line in report["unreadable_files"]]
    assert named == sorted(f"{key(kind)}.toml" for kind in BAD_METADATA)
    assert all("delete it" in line or "fix" in line for line in report["unreadable_files"])


def test_health_forgets_a_file_once_it_is_fixed(
    stocked_env: dict[str, str], stocked: StockedStore
) -> None:
    settings = load_runtime(stocked_env).settings
    assert check_health(settings, library=True)["unreadable_entries"] == len(BAD_METADATA)
    (stocked.metadata / f"{key('notutf8')}.toml").write_text(
        'schema_version = "1.0"\ntitle = "fixed"\n[doiget]\nref = "10.5555/notutf8"\n'
    )
    assert check_health(settings, library=True)["unreadable_entries"] == len(BAD_METADATA) - 1


async def test_the_health_tool_sees_a_file_fixed_in_place_within_a_few_calls(
    stocked_env: dict[str, str], stocked: StockedStore
) -> None:
    """doiget_health reads the latest scan of the metadata files (a scan stats every
    file) and starts the next: a file fixed in place is forgotten by a later call."""
    import time

    import anyio

    tools = PapersTools(load_runtime(stocked_env))
    request = c.NoArguments()
    try:
        first = await tools.health(request, None)  # type: ignore[arg-type]
        assert first["unreadable_entries"] == len(BAD_METADATA)
        assert first["ok"] is True
        (stocked.metadata / f"{key('notutf8')}.toml").write_text(
            'schema_version = "1.0"\ntitle = "fixed"\n[doiget]\nref = "10.5555/notutf8"\n'
        )
        deadline = time.monotonic() + 30  # a bound on the wait, never a measurement
        while True:
            report = await tools.health(request, None)  # type: ignore[arg-type]
            if report["unreadable_entries"] == len(BAD_METADATA) - 1:
                break
            assert time.monotonic() < deadline, report
            await anyio.sleep(0.01)
        assert set(report) >= {"store_writable", "log_writable", "version", "unreadable_files"}
    finally:
        await tools.close()


def test_library_selection_indexes_only_pdfs_doiget_serves(stocked: StockedStore) -> None:
    everything = select(Store(stocked.root), everything=True)
    assert [document.doc_id for document in everything.documents] == [GOOD_DOI]
    problems = {problem.doc_id: problem for problem in everything.problems}
    assert set(problems) == {doi(kind) for kind in BAD_PDFS}
    assert all(problem.reason == "unreadable" for problem in problems.values())

    named = select(Store(stocked.root), refs=[doi(kind) for kind in BAD_METADATA])
    assert not named.documents
    assert {problem.reason for problem in named.problems} == {"unreadable"}


async def test_resources_list_what_can_be_read_and_refuse_the_rest(
    stocked_env: dict[str, str],
) -> None:
    tools = PapersTools(load_runtime(stocked_env))
    try:
        uris = {item.uri for item in await tools.list_resources()}
        prefix = "doiget://paper/"
        assert f"{prefix}{GOOD_KEY}/pdf" in uris
        assert not any(f"{key(kind)}/pdf" in uri for kind in BAD_PDFS for uri in uris)
        assert not any(key(kind) in uri for kind in BAD_METADATA for uri in uris)
        body = await tools.read_resource(f"{prefix}{GOOD_KEY}/pdf")
        assert body is not None and body.data is not None and body.data.startswith(b"%PDF-")
        for kind in BAD_PDFS:
            with pytest.raises(DoigetError) as raised:
                await tools.read_resource(f"{prefix}{key(kind)}/pdf")
            assert raised.value.code is ErrorCode.STORE_ERROR, kind
        for kind in BAD_METADATA:
            with pytest.raises(DoigetError) as raised:
                await tools.read_resource(f"{prefix}{key(kind)}")
            assert raised.value.code is ErrorCode.STORE_ERROR, kind
    finally:
        await tools.close()
