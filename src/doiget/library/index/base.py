"""What a passage index stores and answers, whichever backend holds it.

A backend keeps, per collection, chunks (id, text, payload, dense vector) and their
analysed terms; it answers a dense top-N by cosine similarity, a sparse top-N by
BM25 (k1 = 1.2, b = 0.75 over the analyser's terms; a query term listed n times
weighs n times), the BM25 of given chunks and their stored vectors. Fusion, trimming
and shaping happen above it, in one place, so both backends rank the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from doiget.errors import DoigetError, ErrorCode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vector = NDArray[np.float32]

# Filter keys a caller may use, and where each sits in a chunk's payload. ``project``
# is never among them: the project comes from the call itself and is always applied.
FILTER_KEYS: Final = {
    "tags": ("zotero", "tags"),
    "citekey": ("zotero", "citekey"),
    "doi": ("source", "doi"),
    "year": ("source", "year"),
    "section": ("doc", "section"),
    "doc_id": ("doc", "doc_id"),
}

BM25_K1: Final = 1.2
BM25_B: Final = 0.75


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    """A collection's identity: the project it serves and the model its vectors come from."""

    name: str
    project: str
    embed_model: str
    dimension: int


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One chunk to write: deterministic id, text, payload and its dense vector."""

    id: str
    text: str
    vector: Sequence[float]
    payload: Mapping[str, Any]

    @property
    def doc_id(self) -> str | None:
        """The document the chunk came from (chunks are replaced per document)."""
        doc = self.payload.get("doc")
        value = doc.get("doc_id") if isinstance(doc, Mapping) else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as read back: id, text and payload."""

    id: str
    text: str
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked chunk id with its backend score (cosine, or BM25)."""

    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Filters:
    """Conditions on payload values: every key must match, any of a key's values may."""

    conditions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.conditions)


def directed(vector: Sequence[float]) -> list[float]:
    """``vector`` as floats; EMBEDDING_MISMATCH when it is all zeros or not finite.

    Cosine similarity ignores length, but a zero vector has no direction at all.
    """
    values = [float(value) for value in vector]
    norm = math.sqrt(math.fsum(value * value for value in values))
    if norm == 0.0 or not math.isfinite(norm):
        raise DoigetError(
            ErrorCode.EMBEDDING_MISMATCH,
            "an embedding is all zeros or not finite; send the model's real vector.",
        )
    return values


def filter_values(payload: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The filterable values of a payload, as strings, keyed by filter key."""
    out: dict[str, tuple[str, ...]] = {}
    for key, (outer, inner) in FILTER_KEYS.items():
        container = payload.get(outer)
        value = container.get(inner) if isinstance(container, Mapping) else None
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        out[key] = tuple(str(item) for item in values if item is not None)
    return out


class PassageIndex(Protocol):
    """The operations doiget needs from a backend. All are blocking; callers use threads."""

    def collection(self, name: str) -> CollectionInfo | None:
        """The collection's info, or None when it does not exist."""

    def create_collection(self, info: CollectionInfo) -> None:
        """Create an empty collection (replacing any collection of that name)."""

    def drop_collection(self, name: str) -> None:
        """Delete a collection and every chunk in it (no error when absent)."""

    def upsert(
        self, name: str, chunks: Sequence[ChunkRecord], *, replace_docs: Sequence[str] = ()
    ) -> int:
        """Write chunks (same id = overwrite) after deleting every chunk of ``replace_docs``,
        all or nothing; returns the number written."""

    def dense(self, name: str, vector: Sequence[float], limit: int, filters: Filters) -> list[Hit]:
        """The ``limit`` nearest chunks by cosine similarity, best first."""

    def sparse(self, name: str, terms: Sequence[str], limit: int, filters: Filters) -> list[Hit]:
        """The ``limit`` best chunks by BM25 over analysed terms, best first; a term
        listed n times weighs n times."""

    def sparse_scores(self, name: str, terms: Sequence[str], ids: Sequence[str]) -> list[Hit]:
        """The BM25 scores (as :meth:`sparse` gives them) of these chunks, in no order;
        a chunk with none of the terms, or missing, is left out."""

    def fetch(self, name: str, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """The chunks with these ids (missing ids are left out)."""

    def vectors(self, name: str, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored (unit-length) embeddings of these chunks (missing ids left out)."""

    def sample(self, name: str, limit: int) -> list[StoredChunk]:
        """Up to ``limit`` chunks, in a stable order."""

    def count(self, name: str) -> int:
        """How many chunks the collection holds."""

    def payload_keys(self, name: str) -> list[str]:
        """The top-level payload keys present in the collection."""

    def indexes(self, name: str) -> dict[str, list[str]]:
        """What the backend indexes: keyword filter keys, and full-text fields."""

    def close(self) -> None:
        """Release connections and files."""
