"""The reading core: from a request naming a stored paper (or a project) to a reply.

Reading a PDF is blocking work (a 20-page paper's text layer takes about a quarter of a
second) and aligning a quotation is Python-bound, so each call is a job of a bounded
work pool (the server's papers lane, else one of the reader's own): a full line refuses
the call at once with RATE_LIMITED, and where the pool runs searches apart the job runs
in a worker process (see :mod:`doiget.reading.jobs`). Parsed documents are kept by
content hash (see :class:`doiget.documents.document.DocumentCache`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.integrity import notices
from doiget.papers.origin import passage_origin, pdf_origin
from doiget.papers.store import Entry, Store
from doiget.reading import contracts as c
from doiget.reading import jobs
from doiget.reading.reader import Paper, quote_key

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.library.index.base import StoredChunk
    from doiget.library.service import Library
    from doiget.workpool import WorkPool

T = TypeVar("T")

CANDIDATES: Final = 20  # passages of a project compared with a quotation


class Reader:
    """Reads stored papers (parsed documents are kept per process: doiget.reading.jobs)."""

    def __init__(self, settings: Settings, pool: WorkPool | None = None) -> None:
        self.settings = settings
        self.store = Store(settings.store_root)
        self._pool = pool
        self._own_pool = pool is None
        self._library: Library | None = None

    @property
    def pool(self) -> WorkPool:
        """The pool the work runs in: the server's, else one of this reader's own."""
        if self._pool is None:
            from doiget.workpool import WorkPool

            self._pool = WorkPool(self.settings.workers, self.settings.work_queue)
        return self._pool

    async def _job(self, job: Callable[..., T], *args: Any) -> T:
        """``job(*args)`` (a :mod:`doiget.reading.jobs` function) in the pool: in a worker
        process where it runs searches apart."""
        if self.pool.apart:
            return await self.pool.run_apart(job, *args)
        return await self.pool.run(functools.partial(job, *args))

    async def aclose(self) -> None:
        """Close the passage index, if a project was searched, and the reader's own pool."""
        library, self._library = self._library, None
        if library is not None:
            await library.aclose()
        if self._own_pool and self._pool is not None:
            self._pool.close()
            self._pool = None

    # -- the stored paper ---------------------------------------------------------

    def entry(self, ref_text: str) -> Entry:
        """The stored entry named by a ref or a store key, with a PDF."""
        label, entry = self.store.entry_named(ref_text)
        if entry is None:
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"{label} is not in the library; fetch it first with doiget_fetch_paper.",
            )
        if not entry.has_pdf:
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"{entry.ref} is stored without a PDF (metadata only), so there is no text "
                "to read; fetch its PDF with doiget_fetch_paper (it needs an Open Access copy).",
            )
        return entry

    @staticmethod
    def _paper(entry: Entry) -> Paper:
        title = entry.document.get("title")
        return Paper(
            entry.ref.canonical,
            entry.key,
            title if isinstance(title, str) else None,
            pdf_origin(entry),
        )

    async def read(self, request: c.ReadPaper) -> c.PaperReading:
        """The outline, or a piece of a section or page range (see reader.reading)."""
        entry = await anyio.to_thread.run_sync(self.entry, request.ref)
        return _noted(
            entry, await self._job(jobs.read, entry.pdf_path, self._paper(entry), request)
        )

    async def check(self, request: c.CheckQuote) -> c.QuoteCheck:
        """Whether the quotation is in the paper, or (without a ref) in a project."""
        quote_key(request.quote)  # refused before any work when too long or empty
        if request.ref is None:
            return await self._check_project(request)
        if request.project is not None:
            raise DoigetError(
                ErrorCode.INVALID_REF, "give ref (one paper) or project (its passages), not both."
            )
        entry = await anyio.to_thread.run_sync(self.entry, request.ref)
        return _noted(
            entry, await self._job(jobs.check, entry.pdf_path, self._paper(entry), request.quote)
        )

    # -- a project's passages -----------------------------------------------------

    @property
    def library(self) -> Library:
        if self._library is None:
            from doiget.library.service import Library

            self._library = Library(self.settings)
        return self._library

    async def _check_project(self, request: c.CheckQuote) -> c.QuoteCheck:
        from doiget.library.projects import DEFAULT_PROJECT_ID

        project = self.library.project(request.project or DEFAULT_PROJECT_ID)
        chunks = await self.pool.run(
            functools.partial(self._candidates, project.id, project.collection, request.quote)
        )
        found = await self._job(best_passage, project.id, chunks, request.quote)
        if found.found and found.doc_id and not found.doc_id.startswith("file:"):
            # The passage's paper is stored: its PDF gives the exact page and section.
            exact = await self._in_stored(found.doc_id, request.quote)
            if exact is not None and exact.found:
                kept = {"page", "pages", "section", "passage", "occurrences", "ref", "pdf_origin"}
                return found.model_copy(update={k: getattr(exact, k) for k in kept})
        return found

    async def _in_stored(self, doc_id: str, quote: str) -> c.QuoteCheck | None:
        """The quotation checked in the stored paper ``doc_id``; None when it is not
        stored with a readable PDF."""
        try:
            entry = await anyio.to_thread.run_sync(self.entry, doc_id)
            return await self._job(jobs.check, entry.pdf_path, self._paper(entry), quote)
        except DoigetError:
            return None

    def _candidates(self, project_id: str, collection: str, quote: str) -> list[StoredChunk]:
        """The project's passages that share most words with the quotation (BM25)."""
        from doiget.library import analyzer
        from doiget.library.index.base import Filters

        index = self.library.index
        if index.collection(collection) is None:
            return []
        hits = index.sparse(collection, analyzer.query_terms(quote), CANDIDATES, Filters())
        chunks = index.fetch(collection, [hit.id for hit in hits])
        ordered = [chunks[hit.id] for hit in hits if hit.id in chunks]
        return [chunk for chunk in ordered if chunk.payload.get("project") == project_id]


Reply = TypeVar("Reply", c.PaperReading, c.QuoteCheck)


def _noted(entry: Entry, reply: Reply) -> Reply:
    """``reply`` with the work's retraction, correction and concern notices, if any."""
    found = notices(entry.work)
    if found:
        reply.integrity = found
    return reply


def best_passage(project: str, chunks: list[StoredChunk], quote: str) -> c.QuoteCheck:
    """The passage holding the quotation, else the closest one, with its citing fields
    (a job run like those of :mod:`doiget.reading.jobs`)."""
    from doiget.reading.quote import find, normal, widened

    wanted = quote_key(quote)
    best: tuple[float, Any, Any] | None = None
    for chunk in chunks:
        text = normal(chunk.text)
        match = find(wanted, text, len(chunk.text))
        if match is not None and (best is None or match.similarity > best[0]):
            best = (match.similarity, match, chunk)
    if best is None:
        return c.QuoteCheck(ok=True, found=False, similarity=0.0, passage=None, project=project)
    _, match, chunk = best
    start, end = match.start, match.end
    if not match.occurrences:
        start, end = widened(chunk.text, start, end)
    payload = chunk.payload
    source = payload.get("source") or {}
    doc = payload.get("doc") or {}
    span = doc.get("page_span")
    title = doc.get("section")
    return c.QuoteCheck(
        ok=True,
        found=match.occurrences > 0,
        similarity=match.similarity,
        passage=" ".join(chunk.text[start:end].split()),
        occurrences=match.occurrences,
        page=span[0] if isinstance(span, list) and len(set(span)) == 1 else None,
        pages=list(span) if isinstance(span, list) else None,
        section=c.SectionRef(title=title) if isinstance(title, str) else None,
        project=project,
        doc_id=doc.get("doc_id"),
        title=source.get("title"),
        doi=source.get("doi"),
        citekey=(payload.get("zotero") or {}).get("citekey"),
        **({"pdf_origin": origin} if (origin := passage_origin(source)) else {}),
    )
