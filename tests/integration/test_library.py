"""The library core on real PDFs, the real model and the real SQLite index."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bombs import pdf_operators_bomb
from doiget.config import load_settings
from doiget.contract import build, plain
from doiget.documents.debris import without_debris
from doiget.documents.pdftext import Line, read_pdf
from doiget.documents.sections import sectioned
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import ChunkSearch, CollectionQuery, StoreChunks
from doiget.library.documents import from_file
from doiget.library.index.base import StoredChunk
from doiget.library.service import Library

from pdfmaker import (
    SectionedPdf,
    broken_pdf,
    write_blank_pdf,
    write_corrupt_pdf,
    write_scanned_pdf,
    write_sectioned_pdf,
)
from replay import SHARED_ENCODER_CACHE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
REAL_PDFS = {
    "longeval": FIXTURES / "acl-2023.eacl-main.121-longeval.pdf",
    "jose": FIXTURES / "openquestion-jose-paper.pdf",
    "media": FIXTURES / "paperqa-duplicate_media.pdf",
}
CONFIG = """
[projects."lab/ice"]
[projects."lab/other"]
[projects."lab/dense-only"]
hybrid_enabled = false
"""


def _library(tmp: Path, config: str = CONFIG, backend: Any = None) -> Library:
    """A Library on folders under ``tmp`` (the exported encoder shared with other tests),
    on ``backend`` when given, else its own SQLite index."""
    tmp.mkdir(exist_ok=True)
    (tmp / "config.toml").write_text(config)
    env = {
        "DOIGET_CONFIG": str(tmp / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp / "data"),
        "DOIGET_STORE_ROOT": str(tmp / "papers"),
        "DOIGET_LOG_PATH": str(tmp / "log.jsonl"),
        "DOIGET_MODEL_CACHE": str(SHARED_ENCODER_CACHE),
    }
    return Library(load_settings(env), index=backend)


async def _search(
    library: Library, project: str, query: str, *, hybrid: bool = False, **fields: Any
) -> Any:
    request = build(ChunkSearch, project=project, query=query, **fields)
    return plain(await library.search(request, hybrid=hybrid))


async def _store(library: Library, project: str, items: Any, **fields: Any) -> Any:
    return plain(
        await library.store_chunks(build(StoreChunks, project=project, items=items, **fields))
    )


async def _inspect(library: Library, project: str, sample: int = 0) -> Any:
    return plain(await library.inspect(build(CollectionQuery, project=project, sample=sample)))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three real PDFs and a generated one with known headings, indexed into lab/ice."""
    import anyio

    tmp = tmp_path_factory.mktemp("library")
    sectioned = write_sectioned_pdf(tmp / "lake-ice.pdf")
    library = _library(tmp)
    paths = [*REAL_PDFS.values(), sectioned.path]
    report = plain(anyio.run(library.index_documents, "lab/ice", [from_file(p) for p in paths]))
    yield {"library": library, "report": report, "sectioned": sectioned, "tmp": tmp}
    anyio.run(library.aclose)


def _chunks(library: Library, collection: str) -> list[StoredChunk]:
    return library.index.sample(collection, 100_000)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _passage_lines(path: Path) -> list[Line]:
    """The lines of ``path`` that passages are made of: body text, debris dropped."""
    return [item.line for item in without_debris(sectioned(read_pdf(path).lines))]


def _page_texts(path: Path) -> dict[int, str]:
    pages: dict[int, list[str]] = {}
    for line in _passage_lines(path):
        pages.setdefault(line.page, []).append(line.text)
    return {page: _squash(" ".join(lines)) for page, lines in pages.items()}


def test_every_document_is_indexed(indexed: dict[str, Any]) -> None:
    report = indexed["report"]
    assert report["indexed"] == 4 and report["skipped"] == 0
    assert all(doc["chunks"] > 0 for doc in report["documents"])
    pages = {Path(d["doc_id"].removeprefix("file:")).name: d["pages"] for d in report["documents"]}
    assert pages["acl-2023.eacl-main.121-longeval.pdf"] == 20
    assert pages["openquestion-jose-paper.pdf"] == 4


def test_page_span_is_where_the_text_really_is(indexed: dict[str, Any]) -> None:
    library: Library = indexed["library"]
    chunks = _chunks(library, "proj-lab-ice")
    texts = {path: _page_texts(path) for path in [*REAL_PDFS.values(), indexed["sectioned"].path]}
    checked = 0
    for chunk in chunks:
        first, last = chunk.payload["doc"]["page_span"]
        pages = texts[Path(chunk.payload["source"]["path"])]
        body = _squash(chunk.text)
        assert 1 <= first <= last <= len(pages)
        span_text = " ".join(pages[page] for page in range(first, last + 1))
        middle = len(body) // 2
        assert body[middle - 10 : middle + 10] in span_text, chunk.payload["doc"]
        # ... and the span is tight: the chunk starts on its first page, ends on its last.
        assert body[:10] in pages[first] and body[-10:] in pages[last], chunk.payload["doc"]
        checked += 1
    assert checked > 100


def test_sections_and_pages_of_known_headings(indexed: dict[str, Any]) -> None:
    library: Library = indexed["library"]
    sectioned: SectionedPdf = indexed["sectioned"]
    chunks = [
        c for c in _chunks(library, "proj-lab-ice") if c.payload["doc"]["doc_id"].endswith(".pdf")
    ]
    for heading, (marker, page, path) in sectioned.markers.items():
        holding = [c for c in chunks if marker in _squash(c.text)]
        assert holding, f"no chunk holds the marker of {heading}"
        for chunk in holding:
            doc = chunk.payload["doc"]
            assert doc["section_path"] == path
            assert doc["section"] == path[-1]
            assert doc["page_span"][0] <= page <= doc["page_span"][1]


def test_real_paper_sections(indexed: dict[str, Any]) -> None:
    library: Library = indexed["library"]
    longeval = str(REAL_PDFS["longeval"])
    paths = {
        tuple(c.payload["doc"]["section_path"])
        for c in _chunks(library, "proj-lab-ice")
        if c.payload["source"]["path"] == longeval
    }
    assert ("Abstract",) in paths
    assert ("1 Introduction",) in paths
    assert ("4 Related Work",) in paths
    assert any(len(path) == 2 and path[1].startswith("3.2 RQ2") for path in paths)


@pytest.mark.parametrize(("name", "page"), [("longeval", 5), ("longeval", 9), ("jose", 3)])
async def test_a_sentence_from_page_n_finds_a_chunk_spanning_n(
    indexed: dict[str, Any], name: str, page: int
) -> None:
    library: Library = indexed["library"]
    # Lines of prose (a legend's labels are lines too, but no one asks for them).
    lines = [
        line.text
        for line in _passage_lines(REAL_PDFS[name])
        if line.page == page and len(line.text.split()) >= 6
    ]
    middle = lines[len(lines) // 2 - 1 : len(lines) // 2 + 2]
    query = " ".join(middle)
    for hybrid in (False, True):
        result = await _search(library, "lab/ice", query, top_k=3, hybrid=hybrid)
        spans = [
            item["page_span"] for item in result["items"] if item["title"] == REAL_PDFS[name].stem
        ]
        assert any(first <= page <= last for first, last in spans), (hybrid, query, spans)
        assert all(0.0 <= item["score"] <= 1.0 for item in result["items"])


async def test_reindexing_replaces_without_duplicates(tmp_path: Path) -> None:
    library = _library(tmp_path)
    document = from_file(REAL_PDFS["jose"])
    try:
        first = plain(await library.index_documents("lab/ice", [document]))
        ids_before = sorted(c.id for c in _chunks(library, "proj-lab-ice"))
        second = plain(await library.index_documents("lab/ice", [document]))
        ids_after = sorted(c.id for c in _chunks(library, "proj-lab-ice"))
    finally:
        await library.aclose()
    assert first["chunks_written"] == second["chunks_written"] == len(ids_before)
    assert ids_before == ids_after
    assert len(set(ids_after)) == len(ids_after)


async def test_broken_empty_and_scanned_pdfs_are_reported_not_fatal(tmp_path: Path) -> None:
    write_corrupt_pdf(tmp_path / "corrupt.pdf")
    write_blank_pdf(tmp_path / "blank.pdf")
    write_scanned_pdf(tmp_path / "scan.pdf")
    library = _library(tmp_path)
    (tmp_path / "loop.pdf").write_bytes(broken_pdf("kids-loop"))
    (tmp_path / "parent.pdf").write_bytes(broken_pdf("parent-loop"))
    (tmp_path / "bomb.pdf").write_bytes(pdf_operators_bomb(400_000))
    names = ["corrupt.pdf", "loop.pdf", "blank.pdf", "parent.pdf", "scan.pdf", "bomb.pdf"]
    documents = [from_file(tmp_path / n) for n in names] + [from_file(REAL_PDFS["jose"])]
    try:
        report = plain(await library.index_documents("lab/ice", documents))
    finally:
        await library.aclose()
    by_name = {Path(d["doc_id"]).name: d for d in report["documents"]}
    assert by_name["corrupt.pdf"]["status"] == "skipped"
    assert by_name["corrupt.pdf"]["reason"] == "unreadable"
    assert by_name["blank.pdf"]["reason"] == "no_text"
    assert by_name["scan.pdf"]["reason"] == "no_text"
    assert "OCR" in by_name["scan.pdf"]["message"]
    # A page tree that loops, a page over the text a page may hold: each skipped, the
    # documents after them indexed.
    assert by_name["loop.pdf"]["reason"] == by_name["parent.pdf"]["reason"] == "unreadable"
    assert by_name["bomb.pdf"]["reason"] == "too_large"
    assert by_name["openquestion-jose-paper.pdf"]["status"] == "indexed"
    assert report["indexed"] == 1 and report["skipped"] == 6


def _items(
    n: int, dim: int = 384, model: str | None = None, doc: str = "d1"
) -> list[dict[str, Any]]:
    items = []
    for i in range(n):
        vector = [0.0] * dim
        vector[i % dim] = 1.0
        vector[(i + 1) % dim] = 0.5
        metadata: dict[str, Any] = {
            "zotero": {"citekey": f"key{i}", "tags": ["ice"] if i % 2 else ["radar"]},
            "doc": {
                "doc_id": doc,
                "page_span": [i + 1, i + 1],
                "section": "S",
                "section_path": ["S"],
            },
            "source": {"doi": f"10.1/{i}", "year": 2020 + i},
        }
        if model:
            metadata["embed_model"] = model
        items.append(
            {
                "id": f"chunk-{doc}-{i}",
                "text": f"passage {i} about lake ice",
                "embedding": vector,
                "metadata": metadata,
            }
        )
    return items


async def test_projects_are_isolated_whatever_the_filters(tmp_path: Path) -> None:
    library = _library(tmp_path)
    try:
        await _store(library, "lab/ice", _items(4, doc="a"))
        await _store(library, "lab/other", _items(3, doc="b"))
        for hybrid in (False, True):
            for filters in (None, {"doc_id": "a"}, {"tags": ["ice", "radar"]}):
                found = await _search(
                    library,
                    "lab/other",
                    "passage about lake ice",
                    top_k=20,
                    filters=filters,
                    hybrid=hybrid,
                )
                assert found["count"] <= 3
                assert all(item["citekey"] in {"key0", "key1", "key2"} for item in found["items"])
                assert all(item["chunk_id"].startswith("chunk-b-") for item in found["items"])
        with pytest.raises(DoigetError) as refused:
            await _search(library, "lab/other", "ice", filters={"project": "lab/ice"})
        assert refused.value.code is ErrorCode.INVALID_REF
    finally:
        await library.aclose()


async def test_unknown_project_lists_the_available_ones(tmp_path: Path) -> None:
    library = _library(tmp_path)
    with pytest.raises(DoigetError) as refused:
        await _search(library, "lab/nope", "ice")
    error = refused.value
    assert error.code is ErrorCode.INVALID_PROJECT
    assert error.details == {
        "project_id": "lab/nope",
        "available_projects": ["doiget/papers", "lab/dense-only", "lab/ice", "lab/other"],
    }
    assert "lab/ice" in error.message


async def test_filters_and_top_k_cap(tmp_path: Path) -> None:
    library = _library(tmp_path)
    try:
        await _store(library, "lab/ice", _items(30))
        capped = await _search(library, "lab/ice", "lake ice", top_k=50)
        assert capped["count"] == 20
        default = await _search(library, "lab/ice", "lake ice")
        assert default["count"] == 6
        tagged = await _search(library, "lab/ice", "lake ice", top_k=20, filters={"tags": "radar"})
        assert tagged["count"] == 15
        assert all(int(item["citekey"][3:]) % 2 == 0 for item in tagged["items"])
        year = await _search(library, "lab/ice", "lake ice", filters={"year": 2023}, full_text=True)
        assert [item["citekey"] for item in year["items"]] == ["key3"]
        assert year["items"][0]["full_text"] == "passage 3 about lake ice"
        assert default["items"][0]["full_text"] is None
    finally:
        await library.aclose()


async def test_embedding_mismatch_by_name_and_dimension_and_force_rebuild(tmp_path: Path) -> None:
    library = _library(tmp_path)
    try:
        await _store(library, "lab/ice", _items(3))
        with pytest.raises(DoigetError) as by_dimension:
            await _store(library, "lab/ice", _items(3, dim=8))
        assert by_dimension.value.code is ErrorCode.EMBEDDING_MISMATCH
        assert by_dimension.value.details is not None
        assert by_dimension.value.details["model_dimension"] == 384
        with pytest.raises(DoigetError) as by_name:
            await _store(library, "lab/ice", _items(3, model="other/model"))
        assert by_name.value.code is ErrorCode.EMBEDDING_MISMATCH
        assert "force_rebuild" in by_name.value.message
        assert (await _inspect(library, "lab/ice"))["size"] == 3
        rebuilt = await _store(
            library, "lab/ice", _items(2, dim=8, model="other/model"), force_rebuild=True
        )
        assert rebuilt["chunks_written"] == 2 and rebuilt["embed_model"] == "other/model"
        info = await _inspect(library, "lab/ice", sample=9)
        assert (info["size"], info["dimension"], info["embed_model"]) == (2, 8, "other/model")
        assert len(info["sample"]) == 2 and info["sample"][0]["project"] == "lab/ice"
    finally:
        await library.aclose()


async def test_hybrid_not_supported_when_disabled(tmp_path: Path) -> None:
    library = _library(tmp_path)
    with pytest.raises(DoigetError) as refused:
        await _search(library, "lab/dense-only", "ice", hybrid=True)
    assert refused.value.code is ErrorCode.HYBRID_NOT_SUPPORTED
    assert "find_chunks" in refused.value.message


async def test_a_slow_search_times_out_and_the_index_keeps_serving(tmp_path: Path) -> None:
    library = _library(tmp_path, CONFIG + "\n[library.timeouts]\nfind_chunks = 0.2\n")
    try:
        await _store(library, "lab/ice", _items(5))
        index = library.index
        real_dense = index.dense

        def slow_dense(*args: Any, **kwargs: Any) -> Any:
            # Hold a query open in SQLite until it is interrupted.
            conn = index._conn  # type: ignore[attr-defined]
            with index._lock:  # type: ignore[attr-defined]
                conn.execute(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                    "SELECT count(*) FROM n"
                ).fetchall()
            return real_dense(*args, **kwargs)

        index.dense = slow_dense  # type: ignore[method-assign]
        with pytest.raises(DoigetError) as timed_out:
            await _search(library, "lab/ice", "lake ice")
        assert timed_out.value.code is ErrorCode.TIMEOUT
        assert timed_out.value.details == {"tool": "find_chunks", "timeout_seconds": 0.2}
        index.dense = real_dense  # type: ignore[method-assign]
        again = await _search(library, "lab/ice", "lake ice")
        assert again["count"] == 5
    finally:
        await library.aclose()


async def test_a_call_timing_out_stops_its_own_work_and_no_other_calls(tmp_path: Path) -> None:
    """A query another call is running on the same index when one call's time limit
    passes runs on and answers; the call over its limit gets TIMEOUT."""
    import threading

    import anyio

    bound = 30.0  # no wait below can hang the test, whatever the code does
    library = _library(
        tmp_path, "workers = 2\n" + CONFIG + "\n[library.timeouts]\ninspect_collection = 1\n"
    )
    try:
        await _store(library, "lab/ice", _items(5))
        index = library.index
        conn = index._conn  # type: ignore[attr-defined]
        real_dense = index.dense
        querying, timed_out = threading.Event(), threading.Event()

        def hold() -> int:
            querying.set()
            timed_out.wait(bound)
            return 0

        conn.create_scalar_function("hold", hold)

        def busy_dense(*args: Any, **kwargs: Any) -> Any:
            # A query in SQLite that goes on after the other call's time limit has
            # passed (its first row waits for it), then finishes.
            with index._lock:  # type: ignore[attr-defined]
                conn.execute(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                    "WHERE i < 100000) SELECT sum(CASE WHEN i = 1 THEN hold() ELSE i END) "
                    "FROM n"
                ).fetchall()
            return real_dense(*args, **kwargs)

        index.dense = busy_dense  # type: ignore[method-assign]
        answered: dict[str, Any] = {}

        async def search() -> None:
            answered.update(await _search(library, "lab/ice", "lake ice"))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(search)
            assert await anyio.to_thread.run_sync(querying.wait, bound)
            # inspect_collection waits for the index the search holds, past its limit.
            with pytest.raises(DoigetError) as timed:
                await _inspect(library, "lab/ice")
            timed_out.set()
        assert timed.value.code is ErrorCode.TIMEOUT
        assert timed.value.details == {"tool": "inspect_collection", "timeout_seconds": 1.0}
        assert answered["count"] == 5
        index.dense = real_dense  # type: ignore[method-assign]
        assert (await _inspect(library, "lab/ice"))["size"] == 5
    finally:
        await library.aclose()


@pytest.mark.parametrize("dim", [4, 768])
async def test_the_project_model_fixes_the_vector_size_from_the_first_store(
    tmp_path: Path, dim: int
) -> None:
    """An empty MiniLM collection refuses vectors of another size said to be MiniLM's;
    nothing is created, and MiniLM-sized vectors are then taken."""
    library = _library(tmp_path)
    try:
        with pytest.raises(DoigetError) as refused:
            await _store(library, "lab/ice", _items(2, dim=dim))
        assert refused.value.code is ErrorCode.EMBEDDING_MISMATCH
        assert refused.value.details == {
            "project_model": "sentence-transformers/all-MiniLM-L6-v2",
            "model_dimension": 384,
            "given_dimension": dim,
        }
        assert (await _inspect(library, "lab/ice"))["size"] == 0
        assert (await _store(library, "lab/ice", _items(2)))["chunks_written"] == 2
    finally:
        await library.aclose()
