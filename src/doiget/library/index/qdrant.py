"""The passage index on a Qdrant server (or qdrant-client's local mode).

Layout, one Qdrant collection per doiget collection:

* The collection's identity (project, embedding model, dimension) lives in the Qdrant
  collection's own ``metadata`` under the ``"doiget"`` key, so it is created and dropped
  together with the points. A collection without that key was not made by doiget and is
  refused rather than silently reused or replaced.
* Each chunk is one point. Its id is the chunk id when that is a UUID (doiget's chunk ids
  are deterministic UUIDs); any other string is mapped to a UUID5 of itself. The original
  id is kept in the payload, so hits always carry the id the caller wrote.
* Vectors: ``"dense"`` (cosine, the collection's dimension) and the sparse ``"bm25"``
  vector with Qdrant's IDF modifier. A chunk's sparse value for a term is the BM25
  term-frequency part, ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, over the
  analyser's terms (``dl`` = number of terms in the chunk); Qdrant multiplies in the
  IDF at query time, and a query weighs each distinct term 1.0, so the dot product is
  the BM25 score. ``avgdl`` is a fixed 256 terms (about a chunk's length) instead of the
  collection's live average: the stored values then never need rewriting when other
  chunks come and go. Term indices are the analyser's 32-bit term ids; colliding terms
  are summed.
* Payload: the caller's payload as given, plus ``text`` and doiget's private fields
  ``_id`` (the chunk id), ``_keys`` (the filterable values as strings, from
  :func:`filter_values`, so that a year stored as an int matches the filter ``"2021"``)
  and ``_shadow`` (any caller payload keys that clash with those names). Private fields
  are stripped on read; filters match on ``_keys.<key>``, which carries keyword indexes.

Qdrant has no transactions: :meth:`QdrantIndex.upsert` deletes the replaced documents'
chunks and then writes the new ones, each step acknowledged before the next. A failure
between the two leaves the document without chunks until it is indexed again; it never
leaves stale chunks next to new ones.

Reads and queries of a collection that does not exist answer empty, as the embedded
backend does; writing to one, and any failure of the server or the network, is an
``INDEX_UNAVAILABLE`` error whose message says what to check and never carries the API
key. An all-zero or non-finite embedding is refused as ``EMBEDDING_MISMATCH``.
"""

from __future__ import annotations

import uuid
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import numpy as np
from qdrant_client import QdrantClient, models

from doiget.errors import DoigetError, ErrorCode
from doiget.library import analyzer
from doiget.library.index.base import (
    BM25_B,
    BM25_K1,
    FILTER_KEYS,
    ChunkRecord,
    CollectionInfo,
    Filters,
    Hit,
    StoredChunk,
    directed,
    filter_values,
)

if TYPE_CHECKING:
    from doiget.library.index.base import Vector

DENSE: Final = "dense"
SPARSE: Final = "bm25"
# The average chunk length, in analysed terms, that BM25's length normalisation assumes.
AVGDL: Final = 256.0
METADATA_KEY: Final = "doiget"

TEXT_FIELD: Final = "text"
ID_FIELD: Final = "_id"
KEYS_FIELD: Final = "_keys"
SHADOW_FIELD: Final = "_shadow"
PRIVATE_FIELDS: Final = frozenset({TEXT_FIELD, ID_FIELD, KEYS_FIELD, SHADOW_FIELD})
# Top-level payload fields indexed as keywords besides the filter keys.
EXTRA_KEYWORD_FIELDS: Final = ("project",)

UPSERT_BATCH: Final = 128
SCROLL_PAGE: Final = 256
PAYLOAD_KEYS_SAMPLE: Final = 100

# Namespace for point ids of chunk ids that are not UUIDs themselves.
_ID_NAMESPACE: Final = uuid.UUID("5f0b8a3e-2c1d-4e7a-9b6f-3d2a1c0e9f84")
_HINT: Final = "check that QDRANT_URL is reachable and QDRANT_API_KEY is right"

T = TypeVar("T")


def open_qdrant(
    url: str | None = None, *, api_key: str | None = None, location: str | None = None
) -> QdrantIndex:
    """A :class:`QdrantIndex` on the server at ``url``, or in qdrant-client's local mode.

    ``location=":memory:"`` keeps everything in this process; any other ``location`` is a
    directory for local mode's on-disk storage. ``url`` wins when both are given.
    """
    secrets = (api_key,) if api_key else ()
    try:
        if url:
            # No compatibility probe here: the first real call reports an unreachable server.
            client = QdrantClient(url=url, api_key=api_key, check_compatibility=False)
        elif location == ":memory:":
            client = QdrantClient(location=":memory:")
        elif location:
            # Callers run index calls on worker threads.
            client = QdrantClient(path=location, force_disable_check_same_thread=True)
        else:
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                "no Qdrant server configured: set QDRANT_URL (and QDRANT_API_KEY if the "
                "server needs one)",
            )
    except DoigetError:
        raise
    except Exception as exc:
        raise DoigetError(
            ErrorCode.INDEX_UNAVAILABLE,
            f"cannot open the Qdrant client ({_describe(exc, secrets)}); {_HINT}",
        ) from None
    return QdrantIndex(client, secrets=secrets)


class QdrantIndex:
    """:class:`~doiget.library.index.base.PassageIndex` on a Qdrant client."""

    def __init__(self, client: QdrantClient, *, secrets: Sequence[str] = ()) -> None:
        self._client = client
        # Strings that must never appear in an error message (the API key).
        self._secrets = tuple(secret for secret in secrets if secret)

    # Collections

    def collection(self, name: str) -> CollectionInfo | None:
        """The collection's info, or None when it does not exist."""
        if not self._call("look up a collection", name, self._client.collection_exists, name):
            return None
        try:
            described = self._call("read a collection", name, self._client.get_collection, name)
        except _MissingCollectionError:
            return None
        metadata = described.config.metadata or {}
        stored = metadata.get(METADATA_KEY)
        if not isinstance(stored, Mapping):
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                f"the Qdrant collection {name!r} was not created by doiget (it has no doiget "
                "metadata); use another collection name or drop it",
            )
        return CollectionInfo(
            name=name,
            project=str(stored.get("project", "")),
            embed_model=str(stored.get("embed_model", "")),
            dimension=int(stored.get("dimension", 0)),
        )

    def create_collection(self, info: CollectionInfo) -> None:
        """Create an empty collection (replacing any collection of that name)."""
        name = info.name
        if self._call("look up a collection", name, self._client.collection_exists, name):
            self._call("drop a collection", name, self._client.delete_collection, name)
        self._call(
            "create a collection",
            name,
            self._client.create_collection,
            collection_name=name,
            vectors_config={
                DENSE: models.VectorParams(size=info.dimension, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={
                METADATA_KEY: {
                    "project": info.project,
                    "embed_model": info.embed_model,
                    "dimension": info.dimension,
                }
            },
        )
        fields = [f"{KEYS_FIELD}.{key}" for key in FILTER_KEYS] + list(EXTRA_KEYWORD_FIELDS)
        with warnings.catch_warnings():
            # Local mode warns that payload indexes do nothing there; filters still work.
            warnings.filterwarnings("ignore", message="Payload indexes have no effect")
            for field_name in fields:
                self._call(
                    "index a payload field",
                    name,
                    self._client.create_payload_index,
                    collection_name=name,
                    field_name=field_name,
                    field_schema=models.PayloadSchemaType.KEYWORD,
                    wait=True,
                )

    def drop_collection(self, name: str) -> None:
        """Delete a collection and every chunk in it (no error when absent)."""
        self._call("drop a collection", name, self._client.delete_collection, name)

    # Writes

    def upsert(
        self, name: str, chunks: Sequence[ChunkRecord], *, replace_docs: Sequence[str] = ()
    ) -> int:
        """Delete every chunk of ``replace_docs``, then write ``chunks`` (same id =
        overwrite); best effort, see the module docstring. Returns the number written."""
        points = [_point(chunk) for chunk in chunks]
        if replace_docs:
            selector = models.FilterSelector(
                filter=models.Filter(must=[_condition("doc_id", tuple(replace_docs))])
            )
            self._call(
                "delete replaced chunks",
                name,
                self._client.delete,
                collection_name=name,
                points_selector=selector,
                wait=True,
            )
        for start in range(0, len(points), UPSERT_BATCH):
            self._call(
                "write chunks",
                name,
                self._client.upsert,
                collection_name=name,
                points=points[start : start + UPSERT_BATCH],
                wait=True,
            )
        return len(points)

    # Queries

    def dense(self, name: str, vector: Sequence[float], limit: int, filters: Filters) -> list[Hit]:
        """The ``limit`` nearest chunks by cosine similarity, best first."""
        if limit <= 0 or _matches_nothing(filters):
            return []
        try:
            response = self._call(
                "run a dense query",
                name,
                self._client.query_points,
                collection_name=name,
                query=[float(value) for value in vector],
                using=DENSE,
                query_filter=_filter(filters),
                limit=limit,
                with_payload=[ID_FIELD],
            )
        except _MissingCollectionError:
            return []
        return [Hit(id=_chunk_id(point), score=float(point.score)) for point in response.points]

    def sparse(self, name: str, terms: Sequence[str], limit: int, filters: Filters) -> list[Hit]:
        """The ``limit`` best chunks by BM25 over analysed terms, best first; a term
        listed n times weighs n times."""
        if limit <= 0 or _matches_nothing(filters):
            return []
        return self._bm25(name, terms, _filter(filters), limit)

    def sparse_scores(self, name: str, terms: Sequence[str], ids: Sequence[str]) -> list[Hit]:
        """The BM25 scores of these chunks (missing ones, and ones without a term, left out)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        only = models.Filter(
            must=[models.HasIdCondition(has_id=[point_id(chunk) for chunk in wanted])]
        )
        return self._bm25(name, terms, only, len(wanted))

    def _bm25(
        self, name: str, terms: Sequence[str], where: models.Filter | None, limit: int
    ) -> list[Hit]:
        weights = Counter(analyzer.term_id(term) for term in terms)
        if not weights:
            return []
        indices = sorted(weights)
        try:
            response = self._call(
                "run a sparse query",
                name,
                self._client.query_points,
                collection_name=name,
                query=models.SparseVector(
                    indices=indices, values=[float(weights[index]) for index in indices]
                ),
                using=SPARSE,
                query_filter=where,
                limit=limit,
                with_payload=[ID_FIELD],
            )
        except _MissingCollectionError:
            return []
        hits = [Hit(id=_chunk_id(point), score=float(point.score)) for point in response.points]
        return [hit for hit in hits if hit.score > 0.0]

    # Reads

    def _retrieve(
        self, name: str, ids: Sequence[str], what: str, **fields: Any
    ) -> list[models.Record]:
        """The points of these chunk ids that exist (none for a missing collection)."""
        if not ids:
            return []
        try:
            records: list[models.Record] = self._call(
                what,
                name,
                self._client.retrieve,
                collection_name=name,
                ids=[point_id(chunk_id) for chunk_id in ids],
                **fields,
            )
        except _MissingCollectionError:
            return []
        return records

    def fetch(self, name: str, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """The chunks with these ids (missing ids are left out)."""
        wanted = list(dict.fromkeys(ids))
        records = self._retrieve(name, wanted, "read chunks", with_payload=True)
        found = (_stored(record.id, record.payload) for record in records)
        by_id = {chunk.id: chunk for chunk in found}
        return {chunk_id: by_id[chunk_id] for chunk_id in wanted if chunk_id in by_id}

    def vectors(self, name: str, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored embeddings of these chunks (missing ids are left out)."""
        records = self._retrieve(
            name,
            list(dict.fromkeys(ids)),
            "read vectors",
            with_payload=[ID_FIELD],
            with_vectors=[DENSE],
        )
        found: dict[str, Vector] = {}
        for record in records:
            vector = record.vector.get(DENSE) if isinstance(record.vector, dict) else None
            chunk = (record.payload or {}).get(ID_FIELD)
            if isinstance(chunk, str) and isinstance(vector, list):
                found[chunk] = np.asarray(vector, dtype=np.float32)
        return found

    def sample(self, name: str, limit: int) -> list[StoredChunk]:
        """Up to ``limit`` chunks, in point-id order."""
        return [_stored(record.id, record.payload) for record in self._scroll(name, limit)]

    def count(self, name: str) -> int:
        """How many chunks the collection holds (an exact count)."""
        try:
            result = self._call(
                "count chunks", name, self._client.count, collection_name=name, exact=True
            )
        except _MissingCollectionError:
            return 0
        return int(result.count)

    def payload_keys(self, name: str) -> list[str]:
        """The top-level payload keys seen in the first chunks (up to 100 of them)."""
        keys: set[str] = set()
        for record in self._scroll(name, PAYLOAD_KEYS_SAMPLE):
            keys.update(_original_payload(record.payload or {}))
        return sorted(keys)

    def indexes(self, name: str) -> dict[str, list[str]]:
        """The keyword-indexed payload paths, the full-text field (as the ``bm25`` sparse
        vector) and the dense vector."""
        keyword = [*EXTRA_KEYWORD_FIELDS, *(".".join(path) for path in FILTER_KEYS.values())]
        return {
            "keyword": keyword,
            "fulltext": [TEXT_FIELD],
            "dense": [f"{DENSE} (Qdrant HNSW, cosine)"],
        }

    def close(self) -> None:
        """Release the client's connections (and local mode's files)."""
        self._call("close the client", "", self._client.close)

    # Plumbing

    def _scroll(self, name: str, limit: int) -> list[models.Record]:
        out: list[models.Record] = []
        offset: models.ExtendedPointId | None = None
        while len(out) < limit:
            try:
                records, offset = self._call(
                    "read chunks",
                    name,
                    self._client.scroll,
                    collection_name=name,
                    limit=min(SCROLL_PAGE, limit - len(out)),
                    offset=offset,
                    with_payload=True,
                )
            except _MissingCollectionError:
                return []
            out.extend(records)
            if offset is None or not records:
                break
        return out[:limit]

    def _call(self, what: str, name: str, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return func(*args, **kwargs)
        except DoigetError:
            raise
        except Exception as exc:
            if name and _is_missing(exc):
                raise _MissingCollectionError(name) from None
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                f"Qdrant could not {what} ({_describe(exc, self._secrets)}); {_HINT}",
            ) from None


class _MissingCollectionError(DoigetError):
    """The collection is not there: reads treat it as empty, writes report it."""

    def __init__(self, name: str) -> None:
        super().__init__(
            ErrorCode.INDEX_UNAVAILABLE,
            f"the Qdrant collection {name!r} does not exist; index the project again to create it",
            details={"collection": name},
        )


def point_id(chunk_id: str) -> str:
    """The Qdrant point id of a chunk: the chunk id itself when it is a UUID."""
    try:
        return str(uuid.UUID(chunk_id))
    except ValueError:
        return str(uuid.uuid5(_ID_NAMESPACE, chunk_id))


def sparse_vector(text: str) -> models.SparseVector:
    """A chunk's BM25 term weights (without IDF, which Qdrant applies) by term id."""
    counts = analyzer.term_counts(text)
    length = sum(counts.values())
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / AVGDL)
    weights: defaultdict[int, float] = defaultdict(float)
    for term, tf in counts.items():
        weights[analyzer.term_id(term)] += tf * (BM25_K1 + 1.0) / (tf + norm)
    indices = sorted(weights)
    return models.SparseVector(indices=indices, values=[weights[index] for index in indices])


def _point(chunk: ChunkRecord) -> models.PointStruct:
    vector = directed(chunk.vector)
    payload: dict[str, Any] = {
        key: value for key, value in chunk.payload.items() if key not in PRIVATE_FIELDS
    }
    shadow = {key: value for key, value in chunk.payload.items() if key in PRIVATE_FIELDS}
    if shadow:
        payload[SHADOW_FIELD] = shadow
    payload[TEXT_FIELD] = chunk.text
    payload[ID_FIELD] = chunk.id
    payload[KEYS_FIELD] = {
        key: list(values) for key, values in filter_values(chunk.payload).items()
    }
    return models.PointStruct(
        id=point_id(chunk.id),
        vector={DENSE: vector, SPARSE: sparse_vector(chunk.text)},
        payload=payload,
    )


def _original_payload(stored: Mapping[str, Any]) -> dict[str, Any]:
    payload = {key: value for key, value in stored.items() if key not in PRIVATE_FIELDS}
    shadow = stored.get(SHADOW_FIELD)
    if isinstance(shadow, Mapping):
        payload.update(shadow)
    return payload


def _stored(record_id: models.ExtendedPointId, stored: Mapping[str, Any] | None) -> StoredChunk:
    stored = stored or {}
    chunk_id = stored.get(ID_FIELD)
    text = stored.get(TEXT_FIELD)
    return StoredChunk(
        id=chunk_id if isinstance(chunk_id, str) else str(record_id),
        text=text if isinstance(text, str) else "",
        payload=_original_payload(stored),
    )


def _chunk_id(point: models.ScoredPoint) -> str:
    chunk_id = (point.payload or {}).get(ID_FIELD)
    return chunk_id if isinstance(chunk_id, str) else str(point.id)


def _condition(key: str, values: Iterable[str]) -> models.FieldCondition:
    return models.FieldCondition(
        key=f"{KEYS_FIELD}.{key}", match=models.MatchAny(any=[str(value) for value in values])
    )


def _filter(filters: Filters) -> models.Filter | None:
    # Keys outside FILTER_KEYS are not filterable and are ignored, as in the SQLite backend.
    conditions: list[models.Condition] = [
        _condition(key, values) for key, values in filters.conditions.items() if key in FILTER_KEYS
    ]
    return models.Filter(must=conditions) if conditions else None


def _matches_nothing(filters: Filters) -> bool:
    # A filter key with no acceptable values can match no chunk.
    return any(not values for key, values in filters.conditions.items() if key in FILTER_KEYS)


def _is_missing(exc: Exception) -> bool:
    from qdrant_client.http.exceptions import UnexpectedResponse

    if isinstance(exc, UnexpectedResponse):
        return exc.status_code == 404
    # Local mode reports an unknown collection as a ValueError.
    message = str(exc).lower()
    return isinstance(exc, ValueError) and "collection" in message and "not found" in message


def _describe(exc: BaseException, secrets: Sequence[str]) -> str:
    detail = " ".join(str(exc).split())[:300]
    for secret in secrets:
        detail = detail.replace(secret, "***")
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
