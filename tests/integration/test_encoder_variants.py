"""Which encoder made a collection's vectors is recorded, and vectors of another are
never mixed in: a new collection is indexed by the int8 ONNX variant, one of an earlier
release keeps the plain model, storing another variant's vectors is EMBEDDING_MISMATCH,
and every one of them is queried by the exact model. Real PDFs, model and index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_library import _library

from doiget.contract import build, plain
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import ChunkSearch, CollectionQuery, StoreChunks
from doiget.library.documents import from_file
from doiget.library.embedding import embedder_for
from doiget.library.index.base import CollectionInfo
from doiget.library.ingest import prepare
from doiget.library.projects import DEFAULT_EMBED_MODEL
from doiget.library.service import Library

from pdfmaker import SectionedPdf, write_sectioned_pdf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
JOSE = FIXTURES / "openquestion-jose-paper.pdf"
INT8 = f"{DEFAULT_EMBED_MODEL}+onnx-int8"
CONFIG = """
[projects."lab/new"]
[projects."lab/old"]
[projects."lab/store"]
[projects."lab/sized"]
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, SectionedPdf]]:
    tmp = tmp_path_factory.mktemp("variants")
    library = _library(tmp, CONFIG)
    yield library, write_sectioned_pdf(tmp / "lake-ice.pdf")
    anyio.run(library.aclose)


async def _inspect(library: Library, project: str) -> Any:
    return plain(await library.inspect(build(CollectionQuery, project=project, sample=5)))


async def _finds(library: Library, project: str, pdf: SectionedPdf) -> None:
    """Each marker sentence finds its own chunk, by dense and by hybrid search."""
    for marker, _, _ in list(pdf.markers.values())[:3]:
        for hybrid in (False, True):
            request = build(ChunkSearch, project=project, query=marker, top_k=3, full_text=True)
            found = plain(await library.search(request, hybrid=hybrid))
            assert any(marker in item["full_text"] for item in found["items"]), (hybrid, marker)


def _items(model: str | None) -> list[dict[str, Any]]:
    vector = [0.0] * 384
    vector[0] = 1.0
    metadata: dict[str, Any] = {"doc": {"doc_id": "d"}}
    if model is not None:
        metadata["embed_model"] = model
    return [{"id": "chunk-1", "text": "lake ice", "embedding": vector, "metadata": metadata}]


async def _store(library: Library, project: str, model: str | None) -> Any:
    request = build(StoreChunks, project=project, items=_items(model))
    return plain(await library.store_chunks(request))


async def test_a_new_collection_records_the_int8_encoder_and_answers_queries(
    setup: tuple[Library, SectionedPdf],
) -> None:
    library, pdf = setup
    report = plain(await library.index_documents("lab/new", [from_file(pdf.path)]))
    assert report["indexed"] == 1
    info = await _inspect(library, "lab/new")
    assert info["embed_model"] == INT8
    assert {chunk["embed_model"] for chunk in info["sample"]} == {INT8}
    await _finds(library, "lab/new", pdf)


async def test_an_index_of_an_earlier_release_keeps_its_plain_model(
    setup: tuple[Library, SectionedPdf],
) -> None:
    library, pdf = setup
    project = library.project("lab/old")
    # The index as the previous release wrote it: plain vectors, the bare model id.
    embedder = embedder_for(DEFAULT_EMBED_MODEL)
    library.index.create_collection(
        CollectionInfo(project.collection, project.id, DEFAULT_EMBED_MODEL, embedder.dimension)
    )
    old = await anyio.to_thread.run_sync(prepare, from_file(pdf.path), project, embedder)
    library.index.upsert(project.collection, old.records, replace_docs=[old.source.doc_id])
    await _finds(library, "lab/old", pdf)

    # More documents go in through the plain model: no int8 vector joins plain ones.
    await library.index_documents("lab/old", [from_file(JOSE)])
    info = await _inspect(library, "lab/old")
    assert info["embed_model"] == DEFAULT_EMBED_MODEL
    chunks = library.index.sample(project.collection, 100_000)
    assert {chunk.payload["embed_model"] for chunk in chunks} == {DEFAULT_EMBED_MODEL}
    await _finds(library, "lab/old", pdf)

    # Re-indexing with force_rebuild moves it to the int8 encoder.
    await library.index_documents("lab/old", [from_file(pdf.path)], force_rebuild=True)
    assert (await _inspect(library, "lab/old"))["embed_model"] == INT8
    await _finds(library, "lab/old", pdf)


async def test_vectors_of_another_variant_are_refused(
    setup: tuple[Library, SectionedPdf],
) -> None:
    library, _ = setup
    # Into a collection of int8 vectors: plain ones (named or by default) are refused.
    assert (await _store(library, "lab/store", INT8))["embed_model"] == INT8
    for model in (DEFAULT_EMBED_MODEL, None):
        with pytest.raises(DoigetError) as refused:
            await _store(library, "lab/store", model)
        assert refused.value.code is ErrorCode.EMBEDDING_MISMATCH
        assert refused.value.details is not None
        assert refused.value.details["collection_model"] == INT8
    # Into a collection of plain vectors: int8 ones are refused.
    project = library.project("lab/store")
    library.index.create_collection(
        CollectionInfo(project.collection, project.id, DEFAULT_EMBED_MODEL, 384)
    )
    assert (await _store(library, "lab/store", None))["embed_model"] == DEFAULT_EMBED_MODEL
    with pytest.raises(DoigetError) as refused:
        await _store(library, "lab/store", INT8)
    assert refused.value.code is ErrorCode.EMBEDDING_MISMATCH
    # A variant of the project's model must have the model's vector size, even as the
    # first vectors of a collection.
    wrong = _items(INT8)
    wrong[0]["embedding"] = [1.0] * 8
    with pytest.raises(DoigetError) as sized:
        await library.store_chunks(build(StoreChunks, project="lab/sized", items=wrong))
    assert sized.value.code is ErrorCode.EMBEDDING_MISMATCH
    assert sized.value.details is not None and sized.value.details["model_dimension"] == 384
