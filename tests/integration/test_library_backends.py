"""One corpus in both backends: the same ranking semantics give the same top results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from doiget.config import load_settings
from doiget.contract import build, plain
from doiget.library.contracts import ChunkSearch, CollectionQuery
from doiget.library.documents import from_file
from doiget.library.index.qdrant import open_qdrant
from doiget.library.service import Library

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
QUERIES = [
    "how much annotator workload does partial annotation save",
    "inter-annotator agreement of fine-grained faithfulness judgments",
    "survey reports stored as JSON templates",
    "automatic chart generation from selected columns",
    "Kendall Tau correlation of metrics",
]


def _library(tmp: Path, backend: Any = None) -> Library:
    tmp.mkdir(exist_ok=True)
    (tmp / "config.toml").write_text('[projects."lab/both"]\n')
    env = {
        "DOIGET_CONFIG": str(tmp / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp / "data"),
        "DOIGET_STORE_ROOT": str(tmp / "papers"),
        "DOIGET_LOG_PATH": str(tmp / "log.jsonl"),
    }
    return Library(load_settings(env), index=backend)


async def _top(library: Library, hybrid: bool) -> list[list[str]]:
    tops = []
    for query in QUERIES:
        request = build(ChunkSearch, project="lab/both", query=query, top_k=5)
        found = plain(await library.search(request, hybrid=hybrid))
        tops.append([item["chunk_id"] for item in found["items"]])
    return tops


async def test_sqlite_and_qdrant_agree(tmp_path: Path) -> None:
    documents = [
        from_file(FIXTURES / "acl-2023.eacl-main.121-longeval.pdf"),
        from_file(FIXTURES / "openquestion-jose-paper.pdf"),
    ]
    embedded = _library(tmp_path / "a")
    qdrant = _library(tmp_path / "b", open_qdrant(location=":memory:"))
    try:
        for library in (embedded, qdrant):
            report = plain(await library.index_documents("lab/both", documents))
            assert report["indexed"] == 2
        both = build(CollectionQuery, project="lab/both")
        assert (await embedded.inspect(both)).size == (await qdrant.inspect(both)).size
        for hybrid in (False, True):
            ours, theirs = await _top(embedded, hybrid), await _top(qdrant, hybrid)
            for a, b in zip(ours, theirs, strict=True):
                assert a[0] == b[0], (hybrid, a, b)  # the same best passage
                # exact dense search on both sides; BM25 differs only in its length
                # normalisation, so the top five overlap almost entirely
                assert len(set(a) & set(b)) >= (5 if not hybrid else 3), (hybrid, a, b)
    finally:
        await embedded.aclose()
        await qdrant.aclose()


def test_qdrant_local_mode_opens_through_the_service(tmp_path: Path) -> None:
    library = _library(tmp_path, open_qdrant(location=":memory:"))
    listed = plain(anyio.run(library.list_projects))
    assert [p["collection"] for p in listed["projects"]] == ["proj-doiget-papers", "proj-lab-both"]
    assert anyio.run(library.inspect, build(CollectionQuery, project="lab/both")).size == 0
