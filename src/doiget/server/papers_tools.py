"""The papers toolset: the doiget_* tools and the stored papers as resources.

Handlers are thin: they pass the parsed request to
:class:`doiget.papers.service.Papers` (built on the first call, so listing tools
loads no network or store code) and return its typed result.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio

from doiget.capabilityreport import capability_report
from doiget.contract import RequestT
from doiget.errors import DoigetError, ErrorCode
from doiget.health import check_health, unreadable_entries, with_unreadable
from doiget.owner import LOCAL, current_owner
from doiget.papers import contracts as c
from doiget.runtime import Runtime
from doiget.server.audit_tools import AuditTools
from doiget.server.reading_tools import ReadingTools
from doiget.server.refreshed import Refreshed
from doiget.server.toolset import (
    Hints,
    LazyCore,
    ResourceBody,
    ResourceItem,
    Result,
    ServedTool,
    Tool,
    ToolCall,
    Toolset,
    describe,
)

if TYPE_CHECKING:
    from doiget.claims import contracts as cc
    from doiget.claims.service import ClaimChecker
    from doiget.importing import contracts as ic
    from doiget.papers import added as ac
    from doiget.papers.adding import PdfAdder
    from doiget.papers.service import Papers
    from doiget.papers.store import Entry
    from doiget.verify import contracts as vc
    from doiget.verify.service import Verifier
    from doiget.workpool import WorkPool

logger = logging.getLogger("doiget.server")

T = TypeVar("T")
A = TypeVar("A")

URI_PREFIX: Final = "doiget://paper/"
_KEY: Final = re.compile(r"(?:doi|arxiv|local)_[A-Za-z0-9._-]{1,250}")

READS_LOCAL: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
READS_REMOTE: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=True)
WRITES_STORE: Final = Hints(read_only=False, destructive=False, idempotent=True, open_world=True)
# resolve_paper stores nothing but appends an audit row, so it is not read-only.
APPENDS_LOG: Final = Hints(read_only=False, destructive=False, idempotent=True, open_world=True)


class PapersTools:
    """Handlers sharing one lazily built :class:`Papers`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._core = LazyCore(self._build)
        self._verifier = LazyCore(self._build_verifier)
        self._claims = LazyCore(self._build_claims)
        self._adder: PdfAdder | None = None
        # Naming the unreadable metadata files stats every stored file: too slow for
        # each health call at 100,000 papers, so each call reads the latest scan.
        self._unreadable = Refreshed(self._scan_unreadable)
        self._scanner: WorkPool | None = None
        self.close = self._close

    async def _close(self) -> None:
        self._adder = None
        await self._unreadable.aclose()
        if self._scanner is not None:
            self._scanner.close()
            self._scanner = None
        await self._claims.close()
        await self._core.close()
        await self._verifier.close()

    def _build_verifier(self) -> Verifier:
        from doiget.verify.service import Verifier

        return Verifier.of(self.runtime, offload=self._matched)

    async def _matched(self, work: Callable[[], T]) -> T:
        """Matching of a call the papers lane took (comparing titles and author lists
        of records with thousands of authors): off the event loop, never refused half-way."""
        return await self.runtime.pool("papers").run(work, admitted=True)

    def _build(self) -> Papers:
        from doiget.papers.service import Papers

        return Papers(self.runtime)

    @property
    def papers(self) -> Papers:
        return self._core.get()

    # -- handlers ---------------------------------------------------------------

    async def verify(self, request: vc.VerifyReferences, call: ToolCall) -> vc.Verification:
        from doiget.verify.inputs import read_items

        # Reading up to 100 references of 20,000 characters (LaTeX decoded, names split)
        # is pure Python: in a worker process where searches run apart, so it never
        # holds this process's interpreter lock; else in a thread of the papers lane.
        pool = self.runtime.pool("papers")
        if pool.apart:
            cited = await pool.run_apart(read_items, request.references)
        else:
            cited = await pool.run(functools.partial(read_items, request.references))

        async def report(done: int, total: int, row: vc.Row) -> None:
            await call.progress(done, total, f"{row.key or done}: {row.verdict}")

        return await self.verifier.verify_many(cited, progress=report)

    @property
    def verifier(self) -> Verifier:
        return self._verifier.get()

    def _build_claims(self) -> ClaimChecker:
        from doiget.claims.service import ClaimChecker

        return ClaimChecker.of(self.runtime, verifier=self.verifier, offload=self._matched)

    async def check_claims(self, request: cc.CheckClaims, call: ToolCall) -> cc.ClaimChecks:
        async def report(done: int, total: int, result: cc.ClaimResult) -> None:
            answers = ", ".join(work.addressed for work in result.works) or "error"
            await call.progress(done, total, f"claim {done}: {answers}")

        return await self._claims.get().check(request, progress=report)

    async def add_pdf(self, request: ac.AddPdfs, call: ToolCall) -> ac.PdfsAdded:
        from pathlib import Path

        from doiget.papers.adding import PdfAdder

        if self._adder is None:
            self._adder = PdfAdder(self.papers, self.verifier)
        # A client's roots are folders on its own machine: honoured over stdio, never
        # from a caller over HTTP (a token must not name the server's files).
        roots = await call.roots() if current_owner() == LOCAL else []
        allowed = [Path(root) for root in roots] + list(self.runtime.settings.import_dirs)

        async def report(done: int, total: int, row: ac.AddResult) -> None:
            state = row.status if row.ok else (row.error.code if row.error else "failed")
            await call.progress(done, total, f"{row.path}: {state}")

        return await self._adder.add_many(request.paths, allowed=allowed, progress=report)

    async def import_bibliography(
        self, request: ic.ImportBibliography, call: ToolCall
    ) -> ic.ImportReport:
        from doiget.importing.service import Importer

        importer = Importer(self.papers, self.verifier)
        return await importer.run(request, progress=call.progress)

    async def resolve(self, request: c.PaperLookup, call: ToolCall) -> c.PapersReply:
        return await self.papers.resolve(request)

    async def fetch(self, request: c.PaperFetch, call: ToolCall) -> c.PapersReply:
        return await self.papers.fetch(request)

    async def metadata_only(self, request: c.PaperFetch, call: ToolCall) -> c.PapersReply:
        return await self.papers.metadata_only(request)

    async def batch(self, request: c.BatchFetch, call: ToolCall) -> c.PapersReply:
        async def report(done: int, total: int, row: c.BatchRow) -> None:
            state = "ok" if row.ok else (row.error.code if row.error else "failed")
            await call.progress(done, total, f"{row.ref}: {state}")

        return await self.papers.batch(request, progress=report)

    async def info(self, request: c.PaperLookup, call: ToolCall) -> c.PapersReply:
        return await _off_the_loop(self.papers.info, request)

    async def search(self, request: c.LocalSearch, call: ToolCall) -> c.PapersReply:
        return await self.papers.search_in(self.runtime.pool("papers"), request)

    async def recent(self, request: c.RecentPapers, call: ToolCall) -> c.PapersReply:
        return await self._pooled(self.papers.recent, request)

    async def pdf_path(self, request: c.PaperLookup, call: ToolCall) -> c.PapersReply:
        return await _off_the_loop(self.papers.pdf_path, request)

    async def capability(self, request: c.NoArguments, call: ToolCall) -> Result:
        return {"ok": True, **capability_report(self.runtime)}

    async def health(self, request: c.NoArguments, call: ToolCall) -> Result:
        from doiget.zotero.status import zotero_health

        report = await _off_the_loop(check_health, self.runtime.settings)
        if report["store_writable"]:
            with_unreadable(report, await self._unreadable.get())
        report["zotero"] = await zotero_health(self.runtime)
        return report

    async def _scan_unreadable(self) -> dict[str, Any]:
        # Not in the papers lane: one scan at most runs at a time, and health must not
        # wait in the line of searches. Where searches run apart, so does the scan (a
        # stat and a compare in Python per stored file would hold the server's GIL for
        # seconds at 100,000 papers): in one worker process of its own.
        root = self.runtime.settings.store_root
        if not self.runtime.searches_apart:
            return await _off_the_loop(unreadable_entries, root)
        if self._scanner is None:
            from doiget.workpool import WorkPool

            self._scanner = WorkPool(1, 1, apart=True)
        return await self._scanner.run_apart(unreadable_entries, root)

    async def graph(self, request: c.CitationGraph, call: ToolCall) -> c.PapersReply:
        return await self.papers.graph(request)

    async def bibtex(self, request: c.PaperExport, call: ToolCall) -> c.PapersReply:
        return await self._pooled(self.papers.bibtex, request)

    async def csl(self, request: c.PaperExport, call: ToolCall) -> c.PapersReply:
        return await self._pooled(self.papers.csl, request)

    async def _pooled(self, work: Callable[[RequestT], T], request: RequestT) -> T:
        """``work(request)`` in the work pool: it reads many stored papers (an index
        query, a listing, an export of many refs), too slow for the event loop."""
        return await self.runtime.pool("papers").run(functools.partial(work, request))

    async def format_references(self, request: c.FormatReferences, call: ToolCall) -> c.PapersReply:
        return await self._pooled(self.papers.format_references, request)

    # -- resources --------------------------------------------------------------

    async def list_resources(self) -> list[ResourceItem]:
        """Every readable entry, and its PDF when it has one doiget serves (an entry or a
        PDF that cannot be read is left out and logged, never failing the listing)."""
        return await self.runtime.pool("papers").run(self._resources)

    def _resources(self) -> list[ResourceItem]:
        items: list[ResourceItem] = []
        for entry in self.papers.store.entries():
            title = entry.document.get("title")
            label = str(title) if isinstance(title, str) else entry.ref.canonical
            uri = URI_PREFIX + entry.key
            items.append(ResourceItem(uri, entry.key, label, "application/json"))
            size = self._pdf_size(entry)
            if size is not None:
                items.append(
                    ResourceItem(uri + "/pdf", entry.key + ".pdf", label, "application/pdf", size)
                )
        return items

    @staticmethod
    def _pdf_size(entry: Entry) -> int | None:
        try:
            return entry.pdf_size()
        except DoigetError as error:
            if error.code is not ErrorCode.NOT_FOUND:
                logger.warning(
                    "%s's PDF is left out of the resources: %s", entry.key, error.message
                )
            return None

    async def read_resource(self, uri: str) -> ResourceBody | None:
        if not uri.startswith(URI_PREFIX):
            return None
        key, _, part = uri[len(URI_PREFIX) :].partition("/")
        if not _KEY.fullmatch(key) or part not in ("", "pdf"):
            return None
        entry = self.papers.store.entry_by_key(key)
        if entry is None:
            return None
        if part == "pdf":
            try:
                data = await self.runtime.pool("papers").run(entry.read_pdf)
            except DoigetError as error:
                if error.code is ErrorCode.NOT_FOUND:
                    return None
                raise
            return ResourceBody(uri, "application/pdf", data=data)
        text = json.dumps(
            {"ref": entry.ref.canonical, "key": entry.key, "metadata": entry.document},
            ensure_ascii=False,
            default=str,
        )
        return ResourceBody(uri, "application/json", text=text)


_STORED: Final = "Only papers fetched before (NOT_FOUND otherwise)."
_LOCAL: Final = "Local, milliseconds; no network."


async def _off_the_loop(work: Callable[[A], T], argument: A) -> T:
    """``work(argument)`` in a thread of its own: a file or two read or written, quick,
    but a disk under load can hold it tens of milliseconds, and the event loop must
    not wait on it; nor should it wait in the papers lane behind searches."""
    return await anyio.to_thread.run_sync(functools.partial(work, argument))


def papers_toolset(runtime: Runtime) -> Toolset:
    """The papers toolset for one server."""
    tools = PapersTools(runtime)
    specs: list[ServedTool] = [
        Tool(
            "doiget_resolve_paper",
            describe(
                when="Authoritative metadata (authors, venue, licence, retraction) for a "
                "ref, storing nothing.",
                inputs="ref: DOI or arXiv id.",
                outputs="Metadata, licence, OA url and status.",
                costs="1-2 s: Crossref + Unpaywall (arXiv API for arXiv ids).",
                side_effects="One provenance log row.",
                limits="5 upstream requests/s overall.",
            ),
            c.PaperLookupArgs,
            c.Resolved,
            APPENDS_LOG,
            tools.resolve,
            ref_field="ref",
        ),
        Tool(
            "doiget_fetch_paper",
            describe(
                when="Download a paper's Open Access PDF into the library.",
                inputs="ref; dry_run.",
                outputs="Stored path, source, licence, size; with dry_run the plan.",
                costs="1-3 s. NO_OA_AVAILABLE when no open copy exists.",
                side_effects="Writes the PDF and its metadata; provenance rows.",
                limits="5/s; for many refs use doiget_batch_fetch. PDFs over 100 MB refused.",
            ),
            c.PaperFetchArgs,
            c.Fetched,
            WRITES_STORE,
            tools.fetch,
            ref_field="ref",
        ),
        Tool(
            "doiget_metadata_only",
            describe(
                when="Store a paper's metadata without requesting its PDF.",
                inputs="ref; dry_run.",
                outputs="As doiget_resolve_paper; with dry_run the plan.",
                costs="1-2 s; no publisher request.",
                side_effects="Writes the metadata; a provenance row.",
                limits="5/s. The OA url is reported, never followed.",
            ),
            c.PaperFetchArgs,
            c.StoredMetadata,
            WRITES_STORE,
            tools.metadata_only,
            ref_field="ref",
        ),
        Tool(
            "doiget_batch_fetch",
            describe(
                when="Fetch several papers in one call.",
                inputs="refs; dry_run.",
                outputs="results (one fetch result per ref, in order; failures carry "
                "error.denial_context, null when none) and summary.",
                costs="About 0.6 s per ref; progress notification per ref when a "
                "progressToken is given.",
                side_effects="As doiget_fetch_paper; all refs are checked before any work.",
                limits="5 requests/s, 5 in flight.",
            ),
            c.BatchFetchArgs,
            c.BatchFetched,
            WRITES_STORE,
            tools.batch,
        ),
        Tool(
            "doiget_info",
            describe(
                when="Stored metadata and file paths of a paper in the library.",
                inputs="ref.",
                outputs="key, metadata, metadata_path, pdf_path (null without PDF).",
                costs=_LOCAL,
                side_effects="None.",
                limits=_STORED,
            ),
            c.PaperLookupArgs,
            c.StoredPaper,
            READS_LOCAL,
            tools.info,
            ref_field="ref",
        ),
        Tool(
            "doiget_search_local",
            describe(
                when="Find stored papers by words of title, authors, venue, abstract or year.",
                inputs="query (the last word may be a prefix); limit.",
                outputs="count and results, best first: each {ref, key, title, authors, year, "
                "venue, doi, arxiv_id, fetched_at, has_pdf, path (the stored PDF's path, null "
                "without one)}.",
                costs=_LOCAL,
                side_effects="May rebuild a stale local index.",
                limits="Only the local library.",
            ),
            c.LocalSearchArgs,
            c.Listing,
            READS_LOCAL,
            tools.search,
        ),
        Tool(
            "doiget_list_recent",
            describe(
                when="The papers most recently added to the library.",
                inputs="limit.",
                outputs="count and results, newest first, rows as doiget_search_local's.",
                costs=_LOCAL,
                side_effects="May rebuild a stale local index.",
                limits="Only the local library.",
            ),
            c.RecentPapers,
            c.Listing,
            READS_LOCAL,
            tools.recent,
        ),
        Tool(
            "doiget_paper_pdf_path",
            describe(
                when="The local path of a stored PDF, to hand to another tool.",
                inputs="ref.",
                outputs="path.",
                costs=_LOCAL,
                side_effects="None; the PDF is not read.",
                limits=_STORED,
            ),
            c.PaperLookupArgs,
            c.PdfLocation,
            READS_LOCAL,
            tools.pdf_path,
            ref_field="ref",
        ),
        Tool(
            "doiget_capability_profile",
            describe(
                when="Call first: which sources this instance may use, so you know which "
                "fetches can succeed.",
                inputs="None.",
                outputs="Enabled sources, TDM grants, rate limit.",
                costs="None.",
                side_effects="None.",
                limits="Never contains key material.",
            ),
            c.NoArguments,
            c.Capabilities,
            READS_LOCAL,
            tools.capability,
        ),
        Tool(
            "doiget_health",
            describe(
                when="Check that doiget can work.",
                inputs="None.",
                outputs="version, store and log writability, toolsets, unreadable library entries, "
                "problems.",
                costs="Milliseconds.",
                side_effects="None.",
                limits="None.",
            ),
            c.NoArguments,
            c.Health,
            READS_LOCAL,
            tools.health,
        ),
        Tool(
            "doiget_expand_citation_graph",
            describe(
                when="Papers a work cites and/or papers citing it, a few levels out.",
                inputs="ref; depth; direction.",
                outputs="nodes, edges, truncated (true when a cap cut it).",
                costs="One OpenAlex request per expanded paper.",
                side_effects="None.",
                limits="At most 100 nodes, 20 neighbours per paper. Needs "
                "DOIGET_ENABLE_OPENALEX=1 (else CAPABILITY_DENIED).",
            ),
            c.CitationGraphArgs,
            c.Graph,
            READS_REMOTE,
            tools.graph,
            ref_field="ref",
        ),
        Tool(
            "doiget_bibtex_export",
            describe(
                when="BibTeX for papers in the library.",
                inputs="refs.",
                outputs="bibtex, keys like kucsko2013nanometre, unique in the text.",
                costs=_LOCAL,
                side_effects="None.",
                limits="Every ref must be stored (NOT_FOUND names the missing one).",
            ),
            c.PaperExportArgs,
            c.BibtexExport,
            READS_LOCAL,
            tools.bibtex,
        ),
        Tool(
            "doiget_csl_export",
            describe(
                when="CSL-JSON (citeproc, pandoc, Zotero) for papers in the library.",
                inputs="refs.",
                outputs="items: CSL-JSON items.",
                costs=_LOCAL,
                side_effects="None.",
                limits="Every ref must be stored.",
            ),
            c.PaperExportArgs,
            c.CslExport,
            READS_LOCAL,
            tools.csl,
        ),
        Tool(
            "doiget_format_references",
            describe(
                when="Cite stored papers in a CSL style (APA, IEEE, ...) or export them.",
                inputs="refs; style; locale (e.g. en-GB); format.",
                outputs="references [{ref, entry, citation}] in the style's order, citation "
                "(all refs), text; csl-json: items.",
                costs="Local, under a second; no network.",
                side_effects="None.",
                limits="Every ref must be stored. Retracted works say so.",
            ),
            c.FormatReferencesArgs,
            c.FormattedReferences,
            READS_LOCAL,
            tools.format_references,
        ),
    ]
    from doiget.papers import added as ac
    from doiget.verify import contracts as vc

    specs.append(
        Tool(
            "doiget_add_pdf",
            describe(
                when="Put PDFs you already have into the library, identified.",
                inputs="paths: PDF files or folders inside the client's roots or "
                "DOIGET_IMPORT_DIRS.",
                outputs="results[]: status, ref, identified, identified_by, citekey; summary.",
                costs="About 1 s and 1-6 lookups a PDF; progress per file.",
                side_effects="Copies each file into the store (never changes it); a "
                "provenance row each.",
                limits="Unidentified PDFs: ref local:<sha256>, identified false.",
            ),
            ac.AddPdfs,
            ac.PdfsAdded,
            WRITES_STORE,
            tools.add_pdf,
        )
    )
    specs.append(
        Tool(
            "doiget_verify_references",
            describe(
                when="Check references before citing: real work, right details?",
                inputs="references: BibTeX, RIS, CSL-JSON or free text (max 100).",
                outputs="results[]: key, verdict (verified|miscited|not_found|uncertain), "
                "confidence, problems[{field,kind,cited,actual}], match, integrity, corrected.",
                costs="2-6 upstream requests a reference; cached.",
                side_effects="None.",
                limits="An upstream failure gives uncertain, never not_found.",
            ),
            vc.VerifyReferences,
            vc.Verification,
            READS_REMOTE,
            tools.verify,
        )
    )
    from doiget.claims import contracts as cc

    specs.append(
        Tool(
            "doiget_check_claims",
            describe(
                when="Does a cited work say what a sentence claims?",
                inputs="items: {claim, ref (DOI, arXiv id, key, BibTeX, text; a list) | "
                "text}; fetch.",
                outputs="Per work: basis, addressed, confidence, evidence, cues.",
                costs="Per work: <=13 lookups, a fetch, 90 s.",
                side_effects="fetch stores OA PDFs.",
                limits="50 claims, 100 works.",
            ),
            cc.CheckClaims,
            cc.ClaimChecks,
            WRITES_STORE,  # with fetch, a work's Open Access PDF is stored
            tools.check_claims,
        )
    )
    from doiget.importing import contracts as ic

    specs.append(
        Tool(
            "doiget_import_bibliography",
            describe(
                when="Bring a Zotero, Mendeley or JabRef export into the library.",
                inputs="text (.bib, CSL-JSON or .ris); format; fetch: also OA PDFs.",
                outputs="results[]: key, status (imported|already_present|corrected|not_found|"
                "uncertain|no_identifier|unreadable), ref, alias, problems, note, pdf; counts.",
                costs="As doiget_verify_references, plus ~2 requests a new work.",
                side_effects="Stores metadata; an entry's key becomes its BibTeX key. Idempotent.",
                limits="100 entries; not_found/uncertain ones are not stored (import again "
                "to retry).",
            ),
            ic.ImportBibliographyArgs,
            ic.ImportReport,
            WRITES_STORE,
            tools.import_bibliography,
        )
    )
    reading = ReadingTools(runtime)
    specs += reading.specs()
    specs += AuditTools(runtime, lambda: tools.verifier, reading.reader).specs()

    async def close() -> None:
        await tools.close()
        await reading.close()

    return Toolset(
        "papers",
        specs,
        instructions="Call doiget_capability_profile first to learn which sources this instance "
        "may use. Refs are DOIs ('10.1234/abc') or arXiv ids ('2401.12345'). Every doiget_* "
        "result is { ok: true, ... } or { ok: false, error: { code, message } }; the message "
        "says what to do next.",
        list_resources=tools.list_resources,
        read_resource=tools.read_resource,
        close=close,
    )
