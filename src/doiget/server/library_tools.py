"""The library toolset: the five chunk tools plus index_papers.

Handlers call :class:`doiget.library.service.Library`, built on the first call, so
listing tools loads neither the model nor the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.contract import NoArguments
from doiget.envelopes import LIBRARY_ENVELOPE
from doiget.library import contracts as c
from doiget.runtime import Runtime
from doiget.server.toolset import Hints, LazyCore, ServedTool, Tool, ToolCall, Toolset, describe

if TYPE_CHECKING:
    from doiget.library.service import Library

READS_LOCAL: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
WRITES_LOCAL: Final = Hints(read_only=False, destructive=False, idempotent=True, open_world=False)


class LibraryTools:
    """Handlers sharing one lazily built :class:`Library`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._core = LazyCore(self._build)
        self.close = self._core.close

    def _build(self) -> Library:
        from doiget.library.service import Library

        return Library(self.runtime.settings, pool=self.runtime.pool("library"))

    @property
    def library(self) -> Library:
        return self._core.get()

    async def list_projects(self, request: NoArguments, call: ToolCall) -> c.Projects:
        return await self.library.list_projects()

    async def inspect_collection(self, request: c.CollectionQuery, call: ToolCall) -> c.Collection:
        return await self.library.inspect(request)

    async def store_chunks(self, request: c.StoreChunks, call: ToolCall) -> c.ChunksWritten:
        return await self.library.store_chunks(request)

    async def find_chunks(self, request: c.ChunkSearch, call: ToolCall) -> c.Passages:
        return await self.library.search(request)

    async def query_hybrid(self, request: c.ChunkSearch, call: ToolCall) -> c.Passages:
        return await self.library.search(request, hybrid=True)

    async def index_papers(self, request: c.IndexPapers, call: ToolCall) -> Any:
        from doiget.library.documents import select
        from doiget.papers.store import Store

        library = self.library
        # An unknown project fails before any work, unless the call asks to create it.
        library.project(request.project, create=request.create)
        selection = select(Store(self.runtime.settings.store_root), refs=request.refs)
        return await library.index_documents(
            request.project,
            selection.documents,
            call.progress,
            force_rebuild=request.force_rebuild,
            unusable=selection.problems,
        )


def library_toolset(runtime: Runtime) -> Toolset:
    """The library toolset for one server."""
    tools = LibraryTools(runtime)
    specs: list[ServedTool] = [
        Tool(
            "list_projects",
            describe(
                when="First: which projects (passage collections) exist.",
                inputs="None.",
                outputs="projects.",
                costs="Reads the configuration.",
                side_effects="None.",
                limits="'doiget/papers' always exists; index_papers with create adds one.",
            ),
            NoArguments,
            c.Projects,
            READS_LOCAL,
            tools.list_projects,
            LIBRARY_ENVELOPE,
        ),
        Tool(
            "find_chunks",
            describe(
                when="Passages of a project's indexed papers answering a question, with "
                "citekey, pages, section.",
                inputs="project; a question in plain words; filters.",
                outputs="items best first (render_text trimmed; page_span 1-based; pdf_origin: "
                "fetched or local_file); none when nothing is indexed.",
                costs="An embedding and a vector scan; the first call loads the model (seconds).",
                side_effects="None.",
                limits="8 s (TIMEOUT). Never returns another project's chunks.",
            ),
            c.ChunkSearchArgs,
            c.Passages,
            READS_LOCAL,
            tools.find_chunks,
            LIBRARY_ENVELOPE,
        ),
        Tool(
            "query_hybrid",
            describe(
                when="As find_chunks when exact terms matter (names, symbols, rare words): "
                "fuses BM25 and vector rankings.",
                inputs="As find_chunks.",
                outputs="As find_chunks, scores fused in [0, 1]; else HYBRID_NOT_SUPPORTED.",
                costs="find_chunks plus a BM25 query.",
                side_effects="None.",
                limits="15 s (TIMEOUT). Projects with hybrid_enabled only.",
            ),
            c.ChunkSearchArgs,
            c.Passages,
            READS_LOCAL,
            tools.query_hybrid,
            LIBRARY_ENVELOPE,
        ),
        Tool(
            "inspect_collection",
            describe(
                when="What a project holds: size, model, payload keys, indexes, samples.",
                inputs="project; sample: payloads to include.",
                outputs="The collection's facts.",
                costs="A few index reads.",
                side_effects="None.",
                limits="5 s.",
            ),
            c.CollectionQueryArgs,
            c.Collection,
            READS_LOCAL,
            tools.inspect_collection,
            LIBRARY_ENVELOPE,
        ),
        Tool(
            "store_chunks",
            describe(
                when="Put your own chunks and embeddings in a project (stored papers: use "
                "index_papers).",
                inputs="project; items (metadata: {source, zotero {citekey, tags}, doc "
                "{page_span, section, section_path, doc_id}, embed_model}).",
                outputs="chunks_written, warnings; EMBEDDING_MISMATCH if the model or vector "
                "size differs from the collection's.",
                costs="One transaction; 100-500 items a call is efficient.",
                side_effects="Writes the collection; force_rebuild deletes it first.",
                limits="15 s (TIMEOUT: nothing is written).",
            ),
            c.StoreChunksArgs,
            c.ChunksWritten,
            WRITES_LOCAL,
            tools.store_chunks,
            LIBRARY_ENVELOPE,
        ),
        Tool(
            "index_papers",
            describe(
                when="Make stored papers (doiget_fetch_paper) searchable with find_chunks / "
                "query_hybrid.",
                inputs="refs of stored papers; project.",
                outputs="A report a paper: indexed, or skipped and why (not stored, no PDF, no "
                "text). Also INVALID_PROJECT, EMBEDDING_MISMATCH.",
                costs="Seconds a paper (CPU); progress sent with a progressToken.",
                side_effects="Replaces each indexed paper's chunks; create adds the project to "
                "config.toml.",
                limits="No time limit.",
            ),
            c.IndexPapers,
            c.IndexReport,
            WRITES_LOCAL,
            tools.index_papers,
            LIBRARY_ENVELOPE,
        ),
    ]
    return Toolset(
        "library",
        specs,
        instructions="Library tools (find_chunks, query_hybrid) search passages of papers "
        "indexed into a project (index_papers); results carry citekey, page_span and section "
        "for citing. list_projects names the projects. Errors are {error: {code, message, "
        "details}}: INVALID_PROJECT (details.available_projects), INVALID_ARGUMENT, TIMEOUT, "
        "INDEX_UNAVAILABLE.",
        close=tools.close,
    )
