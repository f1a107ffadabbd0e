"""find_chunks' and query_hybrid's work as one job: find the collection, embed the
query, rank, read the chunks back, join the papers' integrity notices.

The job runs in a worker thread of the library's pool on the process's own index, or,
when the pool runs searches apart (:mod:`doiget.workpool`), in a worker process on
that process's own connections to the same embedded index (:func:`apart`): SQLite's
locking and the vector files' snapshots keep every process's reads consistent with
the writer's commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from doiget.errors import DoigetError, ErrorCode
from doiget.library.hybrid import hybrid_ranking
from doiget.library.index.base import CollectionInfo, Filters, Hit, PassageIndex, StoredChunk
from doiget.workpool import own

if TYPE_CHECKING:
    from doiget.integrity import Notice
    from doiget.library.notices import PaperNotices

# The hits, their chunks by id, and the notices of the papers they come from by doc id.
Found = tuple[list[Hit], dict[str, StoredChunk], dict[str, list["Notice"]]]


@dataclass(frozen=True, slots=True)
class PassageQuery:
    """One search of one project's collection."""

    collection: str
    project: str
    text: str
    model_path: Path | None  # where the query encoder's weights are, when configured
    wanted: int
    filters: Filters = field(default_factory=Filters)
    hybrid: bool = False


def owned_collection(index: PassageIndex, name: str, project: str) -> CollectionInfo | None:
    """Collection ``name`` (None when it has no passages yet), which must be
    ``project``'s: INDEX_UNAVAILABLE when another project's collection has the name."""
    info = index.collection(name)
    if info is not None and info.project != project:
        raise DoigetError(
            ErrorCode.INDEX_UNAVAILABLE,
            f"collection {name!r} belongs to project {info.project!r}; "
            "give each project its own collection in config.toml.",
            details={"project_id": project, "collection": name},
        )
    return info


def query_model(info: CollectionInfo) -> str:
    """The model that embeds queries of the collection: the exact model, whichever of
    its variants made the collection's vectors (see doiget.library.embedding)."""
    from doiget.library.embedding import split_encoder

    return split_encoder(info.embed_model)[0]


def search(index: PassageIndex, notices: PaperNotices, query: PassageQuery) -> Found:
    """The best ``query.wanted`` hits with their chunks and their papers' notices (none
    before the collection has passages); the query is embedded by the process's own
    encoder, loaded on first use."""
    from doiget.library import analyzer
    from doiget.library.embedding import embedder_for

    info = owned_collection(index, query.collection, query.project)
    if info is None:
        return [], {}, {}
    embedder = embedder_for(query_model(info), query.model_path)
    embedder.warm(queries=True)
    vector = embedder.embed([query.text])[0].tolist()
    name = query.collection
    if query.hybrid:
        terms = analyzer.query_terms(query.text)
        hits = hybrid_ranking(index, name, vector, terms, query.filters)[: query.wanted]
    else:
        hits = index.dense(name, vector, query.wanted, query.filters)
    chunks = index.fetch(name, [hit.id for hit in hits])
    # Belt and braces: a chunk whose payload names another project is never returned.
    kept = {cid: c for cid, c in chunks.items() if c.payload.get("project") == query.project}
    return hits, kept, _marked(notices, kept)


def prepare_apart(index_path: Path, store_root: Path, model: str, model_path: Path | None) -> None:
    """What :func:`apart` opens first, opened in a worker process ahead of its first
    search: the index, the store's notices, and ``model``'s query encoder."""
    from doiget.library.embedding import embedder_for
    from doiget.library.index.sqlite import SqliteIndex
    from doiget.library.notices import PaperNotices

    own(SqliteIndex, index_path)
    own(PaperNotices, store_root)
    embedder_for(model, model_path).warm(queries=True)


def _marked(notices: PaperNotices, chunks: dict[str, StoredChunk]) -> dict[str, list[Notice]]:
    """The integrity notices of the stored papers ``chunks`` come from, by doc id
    (clean papers and outside files left out)."""
    marked: dict[str, list[Notice]] = {}
    for doc_id in {
        str((chunk.payload.get("doc") or {}).get("doc_id")) for chunk in chunks.values()
    }:
        found = notices.of(doc_id)
        if found:
            marked[doc_id] = found
    return marked


def apart(index_path: Path, store_root: Path, query: PassageQuery) -> Found:
    """:func:`search` in a worker process, on the embedded index at ``index_path`` and
    the store at ``store_root``, each opened once per process."""
    from doiget.library.index.sqlite import SqliteIndex
    from doiget.library.notices import PaperNotices

    return search(own(SqliteIndex, index_path), own(PaperNotices, store_root), query)
