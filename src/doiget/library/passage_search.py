"""find_chunks' and query_hybrid's work as one job: embed the query, rank, read the
chunks back, join the papers' integrity notices.

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

from doiget.library.hybrid import hybrid_ranking
from doiget.library.index.base import Filters, Hit, PassageIndex, StoredChunk
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
    model: str  # the query encoder's model (see doiget.library.embedding)
    model_path: Path | None  # where its weights are, when configured
    wanted: int
    filters: Filters = field(default_factory=Filters)
    hybrid: bool = False


def search(index: PassageIndex, notices: PaperNotices, query: PassageQuery) -> Found:
    """The best ``query.wanted`` hits with their chunks and their papers' notices (the
    query embedded first: the encoder is the process's own, loaded on first use)."""
    from doiget.library import analyzer
    from doiget.library.embedding import embedder_for

    embedder = embedder_for(query.model, query.model_path)
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
