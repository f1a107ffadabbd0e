"""The library core: projects, ingestion and the five chunk operations, time-bounded.

Every operation names a project; the project's collection is the only one it
touches, and every search also filters on the project, so nothing crosses projects
whatever filters a caller sends. Blocking work (model, PDF, SQLite, ranking) runs
in the process's bounded work pool (:mod:`doiget.workpool`), never on the event
loop; a call over its time limit is cancelled — its own running query interrupted,
never another call's — and answered with TIMEOUT, and one the pool has no room for
is refused at once.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import anyio.lowlevel

from doiget.errors import DoigetError, ErrorCode, quoted, shorten
from doiget.installed import LIBRARY_INSTALL
from doiget.library import contracts as c
from doiget.library.fusion import unit_interval
from doiget.library.index.base import (
    FILTER_KEYS,
    ChunkRecord,
    CollectionInfo,
    Filters,
    PassageIndex,
    StoredChunk,
)
from doiget.library.passage_search import Found, PassageQuery, owned_collection, query_model
from doiget.library.projects import (
    DEFAULT_TOP_K,
    PROJECT_ID,
    PROJECT_ID_HINT,
    Project,
    check_project_id,
    new_project,
    projects_from_config,
    save_project,
)
from doiget.papers.origin import passage_origin
from doiget.surfaces import call_with

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.integrity import Notice
    from doiget.library.embedding import Embedder
    from doiget.library.ingest import SourceDocument
    from doiget.library.notices import PaperNotices
    from doiget.workpool import WorkPool

logger = logging.getLogger("doiget.library")

T = TypeVar("T")
# Called as documents are indexed: (documents done, documents in all, what is
# happening); within a document, done grows by its share of passages embedded.
IndexProgress = Callable[[float, int, str], Awaitable[None]]

SAMPLE_MAX: Final = 5
STORE_MAX: Final = 500  # chunks per store_chunks call
ELLIPSIS: Final = "…"


def trim(text: str, limit: int) -> str:
    """``text`` cut at the last word boundary within ``limit`` characters (with an ellipsis)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    head = cut.rsplit(None, 1)[0] if " " in cut.strip() else cut
    return head.rstrip(" ,;:") + ELLIPSIS


# Filters whose stored values are whole numbers: any other value could never match.
_WHOLE_NUMBER_FILTERS: Final = frozenset({"year"})


def _whole_number(value: str | int) -> bool:
    text = str(value).strip()
    return text.removeprefix("-").isascii() and text.removeprefix("-").isdigit()


def parse_filters(raw: Mapping[str, Any] | None) -> Filters:
    """Validated filters: known keys only, values a string/number or a list of them."""
    if not raw:
        return Filters()
    conditions: dict[str, tuple[str, ...]] = {}
    for key, value in raw.items():
        if key not in FILTER_KEYS:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"filters has no key {quoted(key)}; filter on: {', '.join(FILTER_KEYS)} "
                "(the project is given by 'project' and always applied).",
                details={"filter": shorten(key), "allowed_filters": list(FILTER_KEYS)},
                field="filters",
            )
        values = value if isinstance(value, list) else [value]
        if not values or not all(
            isinstance(item, str | int) and not isinstance(item, bool) for item in values
        ):
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"filters.{key} takes a string or number, or a non-empty list of them.",
                details={"filter": key},
                field=f"filters.{key}",
            )
        if key in _WHOLE_NUMBER_FILTERS:
            wrong = next((item for item in values if not _whole_number(item)), None)
            if wrong is not None:
                raise DoigetError(
                    ErrorCode.INVALID_REF,
                    f"filters.{key} takes a whole number such as 2021, not {quoted(wrong)}; "
                    "nothing was searched.",
                    details={"filter": key},
                    field=f"filters.{key}",
                )
        conditions[key] = tuple(str(item).strip() for item in values)
    return Filters(conditions)


def _passage_progress(
    progress: IndexProgress | None, done: int, total: int, doc_id: str
) -> Callable[[int, int], None] | None:
    """What the worker thread embedding ``doc_id`` calls after each batch of passages:
    ``progress`` told the document's share done so far (from the thread, on the loop)."""
    if progress is None:
        return None
    # The work pool's threads are not the event loop's own: they reach it by its token.
    loop = anyio.lowlevel.current_token()

    async def report(passages: int, of: int) -> None:
        message = f"indexing {doc_id}: {passages}/{of} passages"
        await progress(done + passages / max(of, 1), total, message)

    def embedded(passages: int, of: int) -> None:
        anyio.from_thread.run(report, passages, of, token=loop)

    return embedded


def _report(project: Project, reports: list[c.DocumentReport]) -> c.IndexReport:
    return c.IndexReport(
        project=project.id,
        documents=reports,
        indexed=sum(1 for r in reports if r.status == "indexed"),
        skipped=sum(1 for r in reports if r.status == "skipped"),
        chunks_written=sum(r.chunks for r in reports),
    )


class Library:
    """Projects and their passage index, for one process."""

    def __init__(
        self, settings: Settings, index: PassageIndex | None = None, pool: WorkPool | None = None
    ) -> None:
        self.settings = settings
        self.projects: dict[str, Project] = projects_from_config(
            settings.projects_table, str(settings.config_path)
        )
        self._index = index
        self._pool = pool
        self._own_pool = pool is None
        self._notices: PaperNotices | None = None
        # The embedded index's file when this library opened it (not one it was given).
        self._own_path: Path | None = None

    @property
    def pool(self) -> WorkPool:
        """The pool blocking work runs in: the server's, else one of this library's own."""
        if self._pool is None:
            from doiget.workpool import WorkPool

            self._pool = WorkPool(self.settings.workers, self.settings.work_queue)
        return self._pool

    # -- plumbing ---------------------------------------------------------------

    @property
    def index(self) -> PassageIndex:
        """The passage index: a Qdrant server when QDRANT_URL is set, else embedded SQLite."""
        if self._index is None:
            try:
                self._index = self._open_index()
            except ImportError as exc:
                raise DoigetError(
                    ErrorCode.INDEX_UNAVAILABLE,
                    f"the passage index needs {exc.name or 'a library dependency'}: "
                    f"{LIBRARY_INSTALL}.",
                ) from exc
        return self._index

    def _open_index(self) -> PassageIndex:
        if self.settings.qdrant_url:
            from doiget.library.index.qdrant import open_qdrant
            from doiget.secret import revealed

            return open_qdrant(
                self.settings.qdrant_url, api_key=revealed(self.settings.qdrant_api_key)
            )
        from doiget.library.index.sqlite import SqliteIndex

        index = SqliteIndex(self.settings.data_dir / "library" / "passages.sqlite3")
        self._own_path = index.path
        return index

    def embedder(self, model: str) -> Embedder:
        """The embedder of ``model`` (weights load on first use)."""
        from doiget.library.embedding import embedder_for

        return embedder_for(model, self.settings.embed_model_path)

    def project(self, project_id: str, *, create: bool = False) -> Project:
        """The project, or INVALID_PROJECT naming the ones that exist. With ``create``,
        an unknown (well-formed) id becomes a new project with the default settings,
        saved in config.toml."""
        project = self.projects.get(project_id)
        if project is not None:
            return project
        if create:
            project = new_project(check_project_id(project_id))
            save_project(self.settings.config_path, project)
            self.projects[project.id] = project
            return project
        available = sorted(self.projects)
        advice = (
            f"to make it, call {call_with('index_papers', project=project_id, create='true')}"
            if PROJECT_ID.fullmatch(project_id)
            else f"a new project's id is {PROJECT_ID_HINT}"
        )
        raise DoigetError(
            ErrorCode.INVALID_PROJECT,
            f"Project {quoted(project_id)} not found. Available projects: {available}; {advice}.",
            details={"project_id": shorten(project_id), "available_projects": available},
        )

    async def _bounded(self, tool: str, work: Callable[[], T]) -> T:
        """Run blocking ``work`` in the work pool within the tool's time limit (waiting
        for a worker included: the pool's bounded queue keeps that wait short)."""
        with self._time_limit(tool) as limit:
            return await self.pool.run(work, within=limit)

    @contextlib.contextmanager
    def _time_limit(self, tool: str) -> Iterator[float]:
        """The tool's time limit, over the work done inside: TIMEOUT when it passes."""
        limit = self.settings.library_timeouts[tool]
        try:
            with anyio.fail_after(limit):
                yield limit
        except TimeoutError:
            logger.warning("%s cancelled after %.3g s", tool, limit)
            raise DoigetError(
                ErrorCode.TIMEOUT,
                f"{tool} did not finish within its {limit:g} s limit and was cancelled; "
                "retry, or narrow it (fewer items, a smaller top_k, filters).",
                details={"tool": tool, "timeout_seconds": limit},
            ) from None

    def document_embedder(self, project: Project, recorded: str | None) -> Embedder:
        """The embedder of the project's documents: the encoder a collection records
        (``recorded``) when it is a variant of the project's model, else the fastest
        one that runs here (blocking: it may export the model on first use)."""
        from doiget.library.embedding import document_embedder, split_encoder

        if recorded is not None and split_encoder(recorded)[0] != project.embed_model:
            recorded = None  # another model: _ensure_collection refuses the mix
        return document_embedder(
            project.embed_model,
            self.settings.embed_model_path,
            self.settings.encoder_cache,
            recorded,
        )

    async def _warm_queries(self, model: str) -> None:
        """Load the query encoder of ``model`` outside any time limit (a fraction of a
        second; documents are embedded by :meth:`document_embedder`)."""
        embedder = self.embedder(model)
        await anyio.to_thread.run_sync(functools.partial(embedder.warm, queries=True))

    async def _found(self, tool: str, query: PassageQuery) -> Found:
        """The search's work, one job within the tool's time limit: in a worker process
        when the pool runs searches apart and the index is the embedded one this
        library opened (a worker opens it by its path), else in a worker thread on this
        process's index. Either way the query encoder is loaded first, outside the
        limit (in every worker process, when apart)."""
        from doiget.library import passage_search

        index = self.index  # opened first: opening it is what sets _own_path
        info = await anyio.to_thread.run_sync(
            owned_collection, index, query.collection, query.project
        )
        if self.pool.apart and self._own_path is not None:
            if info is not None:
                await self.pool.prepare_apart(
                    passage_search.prepare_apart,
                    self._own_path,
                    self.settings.store_root,
                    query_model(info),
                    query.model_path,
                )
            with self._time_limit(tool) as limit:
                return await self.pool.run_apart(
                    passage_search.apart,
                    self._own_path,
                    self.settings.store_root,
                    query,
                    within=limit,
                )
        if info is not None:
            await self._warm_queries(query_model(info))
        if self._notices is None:
            from doiget.library.notices import PaperNotices

            self._notices = PaperNotices(self.settings.store_root)
        notices = self._notices
        with self._time_limit(tool) as limit:
            return await self.pool.run(
                lambda: passage_search.search(index, notices, query), within=limit
            )

    def _collection(self, project: Project) -> CollectionInfo | None:
        return owned_collection(self.index, project.collection, project.id)

    def _ensure_collection(
        self, project: Project, model: str, dimension: int, force_rebuild: bool, tool: str
    ) -> None:
        """Create the collection, or check it matches ``model``/``dimension``."""
        info = self._collection(project)
        if info is not None and (info.embed_model, info.dimension) == (model, dimension):
            return
        if info is not None and not force_rebuild:
            raise DoigetError(
                ErrorCode.EMBEDDING_MISMATCH,
                f"collection {project.collection!r} holds {info.embed_model} vectors of "
                f"size {info.dimension}; these are {model} of size {dimension}. A collection "
                f"holds the vectors of one encoder (model+variant) only: re-embed with "
                f"{info.embed_model}, or call {call_with(tool, force_rebuild='true')} to drop "
                "the collection and start over.",
                details={
                    "collection_model": info.embed_model,
                    "collection_dimension": info.dimension,
                    "given_model": model,
                    "given_dimension": dimension,
                },
            )
        self.index.create_collection(
            CollectionInfo(project.collection, project.id, model, dimension)
        )

    # -- the five operations ----------------------------------------------------

    async def list_projects(self) -> c.Projects:
        """Every configured project."""
        return c.Projects(
            projects=[
                c.ProjectInfo(
                    id=project.id,
                    collection=project.collection,
                    embed_model=project.embed_model,
                    hybrid_enabled=project.hybrid_enabled,
                )
                for project in sorted(self.projects.values(), key=lambda p: p.id)
            ]
        )

    async def inspect(self, request: c.CollectionQuery) -> c.Collection:
        """A collection's size, model, payload keys, indexes and up to five sample payloads."""
        project = self.project(request.project)

        def work() -> c.Collection:
            info = self._collection(project)
            if info is None:
                return self._describe(project, project.embed_model, 0, [], {}, [])
            chunks = self.index.sample(project.collection, min(request.sample, SAMPLE_MAX))
            return self._describe(
                project,
                info.embed_model,
                self.index.count(project.collection),
                self.index.payload_keys(project.collection),
                self.index.indexes(project.collection),
                [self._sample(project, chunk) for chunk in chunks],
                dimension=info.dimension,
            )

        return await self._bounded("inspect_collection", work)

    @staticmethod
    def _describe(
        project: Project,
        model: str,
        size: int,
        keys: list[str],
        indexes: dict[str, list[str]],
        sample: list[dict[str, Any]],
        dimension: int | None = None,
    ) -> c.Collection:
        return c.Collection(
            project=project.id,
            collection=project.collection,
            size=size,
            embed_model=model,
            dimension=dimension,
            hybrid_enabled=project.hybrid_enabled,
            payload_keys=keys,
            indexes=indexes,
            sample=sample,
        )

    @staticmethod
    def _sample(project: Project, chunk: StoredChunk) -> dict[str, Any]:
        return {
            "id": chunk.id,
            **chunk.payload,
            "text": trim(chunk.text, project.max_chars_per_chunk),
        }

    async def store_chunks(self, request: c.StoreChunks) -> c.ChunksWritten:
        """Upsert caller-made chunks (ids, texts, vectors, payloads) into the project."""
        project = self.project(request.project)
        items = request.items
        if not 1 <= len(items) <= STORE_MAX:
            raise DoigetError(ErrorCode.INVALID_REF, f"store_chunks needs 1-{STORE_MAX} items.")
        dimensions = {len(item.embedding) for item in items}
        models = {
            str((item.metadata or {}).get("embed_model") or project.embed_model) for item in items
        }
        if len(dimensions) > 1 or len(models) > 1:
            raise DoigetError(
                ErrorCode.EMBEDDING_MISMATCH,
                f"one call must use one model and vector size; got models {sorted(models)} "
                f"and sizes {sorted(dimensions)}. Split the batch.",
                details={"models": sorted(models), "dimensions": sorted(dimensions)},
            )
        model, dimension = models.pop(), dimensions.pop()
        self._check_model_dimension(project, model, dimension)
        warnings: list[str] = []
        records = []
        for item in items:
            metadata = dict(item.metadata or {})
            if metadata.get("project") not in (None, project.id):
                warnings.append(f"item {item.id}: metadata.project replaced by {project.id}")
            metadata["project"] = project.id
            metadata["embed_model"] = model
            records.append(ChunkRecord(item.id, item.text, list(item.embedding), metadata))

        def work() -> int:
            self._ensure_collection(
                project, model, dimension, request.force_rebuild, "store_chunks"
            )
            return self.index.upsert(project.collection, records)

        written = await self._bounded("store_chunks", work)
        return c.ChunksWritten(
            chunks_written=written, project=project.id, embed_model=model, warnings=warnings
        )

    def _check_model_dimension(self, project: Project, model: str, dimension: int) -> None:
        """Vectors said to be the project's model must have that model's size, even in
        an empty collection: queries are embedded with it, so any other size could
        never be searched."""
        from doiget.library.embedding import declared_dimension, split_encoder

        base = split_encoder(model)[0]
        if base != project.embed_model:
            return
        expected = declared_dimension(base, self.settings.embed_model_path)
        if expected is not None and expected != dimension:
            raise DoigetError(
                ErrorCode.EMBEDDING_MISMATCH,
                f"project {project.id!r} embeds with {model}, whose vectors have size "
                f"{expected}; these have size {dimension}. Embed the chunks with {model}, or "
                "name the model they were made with in metadata.embed_model (with "
                "force_rebuild, which drops the collection).",
                details={
                    "project_model": model,
                    "model_dimension": expected,
                    "given_dimension": dimension,
                },
            )

    async def search(self, request: c.ChunkSearch, *, hybrid: bool = False) -> c.Passages:
        """find_chunks (dense) or query_hybrid (dense + BM25 fused)."""
        project = self.project(request.project)
        query, full_text = request.query, request.full_text
        tool = "query_hybrid" if hybrid else "find_chunks"
        if hybrid and not project.hybrid_enabled:
            raise DoigetError(
                ErrorCode.HYBRID_NOT_SUPPORTED,
                f"hybrid search is off for project {project.id!r}; use find_chunks, or set "
                f'hybrid_enabled = true under [projects."{project.id}"] in config.toml.',
                details={"project_id": project.id},
            )
        wanted = min(request.top_k or DEFAULT_TOP_K, project.top_k_max)
        conditions = parse_filters(request.filters)
        hits, chunks, marked = await self._found(
            tool,
            PassageQuery(
                project.collection,
                project.id,
                query,
                self.settings.embed_model_path,
                wanted,
                conditions,
                hybrid,
            ),
        )
        items = [
            self._item(project, chunks[hit.id], hit.score, full_text, marked)
            for hit in hits
            if hit.id in chunks
        ]
        if hybrid:
            return c.Passages(items=items, count=len(items), hybrid_enabled=True)
        return c.Passages(items=items, count=len(items))

    @staticmethod
    def _item(
        project: Project,
        chunk: StoredChunk,
        score: float,
        full_text: bool,
        marked: Mapping[str, list[Notice]],
    ) -> c.Passage:
        """A search result; ``score`` is the fused score or, for find_chunks, the cosine.

        Built unchecked: the citing fields are the caller's payload as stored; the
        paper's integrity notices join it only when it has some.
        """
        payload = chunk.payload
        source = payload.get("source") or {}
        zotero = payload.get("zotero") or {}
        doc = payload.get("doc") or {}
        span = doc.get("page_span")
        found = marked.get(str(doc.get("doc_id")))
        extra: dict[str, Any] = {"integrity": found} if found else {}
        origin = passage_origin(source)
        if origin is not None:
            extra["pdf_origin"] = origin
        return c.Passage.model_construct(
            render_text=trim(chunk.text, project.max_chars_per_chunk),
            score=round(unit_interval(score), 6),
            citekey=zotero.get("citekey"),
            section=doc.get("section"),
            page_span=list(span) if isinstance(span, list) else None,
            section_path=list(doc.get("section_path") or []),
            doi=source.get("doi"),
            url=source.get("url"),
            title=source.get("title"),
            chunk_id=chunk.id,
            full_text=chunk.text if full_text else None,
            **extra,
        )

    # -- ingestion --------------------------------------------------------------

    async def index_documents(
        self,
        project_id: str,
        documents: Sequence[SourceDocument],
        progress: IndexProgress | None = None,
        *,
        force_rebuild: bool = False,
        unusable: Sequence[c.DocumentReport] = (),
    ) -> c.IndexReport:
        """Index PDFs into the project; a document that fails is reported and skipped.

        ``unusable`` are documents the caller already found it cannot index (a ref that
        is not stored, a missing file); they join the report as skipped.
        """
        from doiget.documents.pdftext import UnusableDocument
        from doiget.library.ingest import prepare

        project = self.project(project_id)
        if not documents:
            # Nothing readable to index (nothing stored, files missing): say so now,
            # without loading the model first.
            return _report(project, list(unusable))
        # Admitted once, at its first job: a long run is never refused half-way.
        info = await self.pool.run(functools.partial(self._collection, project))
        # A collection keeps the encoder it was made with (an index of an earlier
        # release, the plain model); a new or rebuilt one gets the fastest.
        recorded = None if info is None or force_rebuild else info.embed_model
        embedder = await self.pool.run(
            functools.partial(self.document_embedder, project, recorded), admitted=True
        )
        await self.pool.run(
            functools.partial(
                self._ensure_collection,
                project,
                embedder.model_id,
                embedder.dimension,
                force_rebuild,
                "index_papers",
            ),
            admitted=True,
        )
        reports: list[c.DocumentReport] = []
        total = len(documents)
        for done, document in enumerate(documents):
            if progress is not None:
                await progress(done, total, f"indexing {document.doc_id}")
            embedded = _passage_progress(progress, done, total, document.doc_id)
            try:
                prepared = await self.pool.run(
                    functools.partial(prepare, document, project, embedder, embedded), admitted=True
                )
                written = await self.pool.run(
                    functools.partial(
                        self.index.upsert,
                        project.collection,
                        prepared.records,
                        replace_docs=[document.doc_id],
                    ),
                    admitted=True,
                )
                reports.append(
                    c.DocumentReport(
                        doc_id=document.doc_id,
                        status="indexed",
                        chunks=written,
                        pages=prepared.pages,
                    )
                )
            except UnusableDocument as problem:
                reports.append(
                    c.DocumentReport.skipped(document.doc_id, problem.reason, problem.message)
                )
        if progress is not None:
            await progress(len(documents), len(documents), "done")
        return _report(project, reports + list(unusable))

    async def aclose(self) -> None:
        """Close the index (and the pool, when it is this library's own)."""
        index, self._index = self._index, None
        if index is not None:
            await anyio.to_thread.run_sync(index.close)
        if self._own_pool and self._pool is not None:
            self._pool.close()
            self._pool = None
