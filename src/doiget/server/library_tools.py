"""The library toolset: the five chunk tools of spec/library-chunk-tools.md plus index_papers.

Handlers call :class:`doiget.library.service.Library`, built on the first call, so
listing tools loads neither the model nor the index.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from doiget.runtime import Runtime
from doiget.server.envelopes import LIBRARY_ENVELOPE
from doiget.server.toolset import (
    Handler,
    Hints,
    LazyCore,
    ToolCall,
    Toolset,
    ToolSpec,
    describe,
    object_schema,
    tool_spec,
)

if TYPE_CHECKING:
    from doiget.library.service import Library

READS_LOCAL: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
WRITES_LOCAL: Final = Hints(read_only=False, destructive=False, idempotent=True, open_world=False)

PROJECT: Final = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "Project id 'namespace/name' (list_projects shows them).",
}
QUERY: Final = {"type": "string", "minLength": 1, "maxLength": 2000}
TOP_K: Final = {
    "type": "integer",
    "minimum": 1,
    "maximum": 20,
    "default": 6,
    "description": "Results wanted (default 6; capped by the project's top_k_max, at most 20).",
}
_SCALAR: Final = {"type": ["string", "integer"]}
FILTERS: Final = {
    "type": "object",
    "description": "Payload filters, all must hold; a list means any of: tags, citekey, doi, "
    "year, section, doc_id. The project is always applied and cannot be filtered away.",
    "additionalProperties": {
        "anyOf": [_SCALAR, {"type": "array", "items": _SCALAR, "minItems": 1, "maxItems": 50}]
    },
}
FULL_TEXT: Final = {
    "type": "boolean",
    "default": False,
    "description": "Also return each chunk's untrimmed text as full_text.",
}
_NULLABLE_STR: Final = {"type": ["string", "null"]}
SEARCH_ITEM: Final = {
    "type": "object",
    "required": [
        "render_text",
        "score",
        "citekey",
        "section",
        "page_span",
        "section_path",
        "doi",
        "full_text",
    ],
    "properties": {
        "render_text": {"type": "string"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "citekey": _NULLABLE_STR,
        "section": _NULLABLE_STR,
        "page_span": {
            "type": ["array", "null"],
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
        },
        "section_path": {"type": "array", "items": {"type": "string"}},
        "doi": _NULLABLE_STR,
        "url": _NULLABLE_STR,
        "title": _NULLABLE_STR,
        "chunk_id": {"type": "string"},
        "full_text": _NULLABLE_STR,
    },
}
SEARCH_OUTPUT: Final = {
    "type": "object",
    "required": ["items", "count"],
    "properties": {
        "items": {"type": "array", "items": SEARCH_ITEM},
        "count": {"type": "integer"},
        "hybrid_enabled": {"type": "boolean"},
    },
}
CHUNK_ITEM: Final = object_schema(
    {
        "id": {"type": "string", "minLength": 1, "maxLength": 128},
        "text": {"type": "string", "minLength": 1, "maxLength": 100_000},
        "embedding": {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 1,
            "maxItems": 4096,
        },
        "metadata": {"type": "object"},
    },
    ("id", "text", "embedding"),
)
_ERRORS: Final = (
    "Errors: {error: {code, message, details}} with isError set; codes INVALID_PROJECT "
    "(details.available_projects lists the real ones), INVALID_ARGUMENT, TIMEOUT, "
    "INDEX_UNAVAILABLE"
)


class LibraryTools:
    """Handlers sharing one lazily built :class:`Library`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._core = LazyCore(self._build)
        self.close = self._core.close

    def _build(self) -> Library:
        from doiget.library.service import Library

        return Library(self.runtime.settings)

    @property
    def library(self) -> Library:
        return self._core.get()

    async def list_projects(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.library.list_projects()

    async def inspect_collection(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.library.inspect(args["project"], int(args.get("sample", 0)))

    async def store_chunks(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.library.store_chunks(
            args["project"], args["items"], bool(args.get("force_rebuild", False))
        )

    def search(self, hybrid: bool) -> Handler:
        """find_chunks (dense) or query_hybrid."""

        async def handle(args: Mapping[str, Any], call: ToolCall) -> Any:
            return await self.library.search(
                args["project"],
                args["query"],
                top_k=args.get("top_k"),
                filters=args.get("filters"),
                full_text=bool(args.get("full_text", False)),
                hybrid=hybrid,
            )

        return handle

    async def index_papers(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        from doiget.library.documents import select
        from doiget.papers.store import Store

        library = self.library
        library.project(args["project"])  # an unknown project fails before any work
        selection = select(Store(self.runtime.settings.store_root), refs=args["refs"])
        return await library.index_documents(
            args["project"],
            selection.documents,
            call.progress,
            force_rebuild=bool(args.get("force_rebuild", False)),
            unusable=selection.problems,
        )


def _spec(
    name: str,
    description: str,
    inputs: Mapping[str, Any],
    required: tuple[str, ...],
    output: Mapping[str, Any],
    hints: Hints,
    handler: Handler,
) -> ToolSpec:
    return tool_spec(name, description, inputs, required, output, hints, handler, LIBRARY_ENVELOPE)


def library_toolset(runtime: Runtime) -> Toolset:
    """The library toolset for one server."""
    tools = LibraryTools(runtime)
    search_inputs = {
        "project": PROJECT,
        "query": QUERY,
        "top_k": TOP_K,
        "filters": FILTERS,
        "full_text": FULL_TEXT,
    }
    result_shape = (
        "{ items: [{ render_text (trimmed at a word to the project's max_chars_per_chunk), "
        "score 0-1, citekey, section, page_span [first, last] (1-based), section_path, doi, "
        "url, title, chunk_id, full_text (null unless asked) }], count"
    )
    specs = [
        _spec(
            "list_projects",
            describe(
                when="First, to learn which projects (passage collections) exist.",
                inputs="None.",
                outputs="{ projects: [{ id, collection, embed_model, hybrid_enabled }] }.",
                costs="Reads the configuration only.",
                side_effects="None.",
                limits="Projects are added with the CLI (doiget projects add).",
            ),
            {},
            (),
            object_schema({"projects": {"type": "array"}}, ("projects",)),
            READS_LOCAL,
            tools.list_projects,
        ),
        _spec(
            "find_chunks",
            describe(
                when="Find passages in a project's indexed papers that answer a question, "
                "with citation-ready metadata (citekey, pages, section).",
                inputs="project; query (natural language); top_k 1-20 (default 6); filters "
                "(tags, citekey, doi, year, section, doc_id); full_text.",
                outputs=result_shape + " }. Empty items when nothing is indexed. " + _ERRORS + ".",
                costs="One query embedding plus an exact vector scan; the first call of a "
                "process loads the model (seconds).",
                side_effects="None.",
                limits="Time limit 8 s (TIMEOUT). Never returns chunks of another project.",
            ),
            search_inputs,
            ("project", "query"),
            SEARCH_OUTPUT,
            READS_LOCAL,
            tools.search(hybrid=False),
        ),
        _spec(
            "query_hybrid",
            describe(
                when="Like find_chunks, when exact terms matter (names, symbols, rare words): "
                "fuses BM25 full-text and vector rankings.",
                inputs="As find_chunks.",
                outputs=result_shape
                + ", hybrid_enabled: true }. "
                + _ERRORS
                + ", HYBRID_NOT_SUPPORTED (use find_chunks).",
                costs="find_chunks plus a BM25 query; scores are a weighted fusion in [0, 1].",
                side_effects="None.",
                limits="Time limit 15 s (TIMEOUT). Only for projects with hybrid_enabled.",
            ),
            search_inputs,
            ("project", "query"),
            SEARCH_OUTPUT,
            READS_LOCAL,
            tools.search(hybrid=True),
        ),
        _spec(
            "inspect_collection",
            describe(
                when="Check what a project holds: size, model, payload keys, indexes, samples.",
                inputs="project; sample 0-5 (payloads to include, default 0).",
                outputs="{ project, collection, size, embed_model, dimension, hybrid_enabled, "
                "payload_keys, indexes, sample: [{ id, project, source, zotero, doc, text }] }. "
                + _ERRORS
                + ".",
                costs="A few index reads.",
                side_effects="None.",
                limits="Time limit 5 s. At most 5 samples.",
            ),
            {
                "project": PROJECT,
                "sample": {"type": "integer", "minimum": 0, "maximum": 5, "default": 0},
            },
            ("project",),
            {"type": "object", "required": ["project", "collection", "size", "embed_model"]},
            READS_LOCAL,
            tools.inspect_collection,
        ),
        _spec(
            "store_chunks",
            describe(
                when="You have your own chunks and embeddings to put in a project (to index "
                "stored papers, use index_papers instead).",
                inputs="project; items: 1-500 of { id (deterministic: same id overwrites), "
                "text, embedding (numbers), metadata { source, zotero {citekey, tags}, doc "
                "{page_span, section, section_path, doc_id}, embed_model } }; force_rebuild.",
                outputs="{ chunks_written, project, embed_model, warnings }. "
                + _ERRORS
                + ", EMBEDDING_MISMATCH (model name or vector size differs from the "
                "collection's; force_rebuild drops the collection and starts over).",
                costs="One transaction per call; batches of 100-500 are the efficient size.",
                side_effects="Writes to the project's collection; force_rebuild deletes it first.",
                limits="Time limit 15 s (TIMEOUT: nothing of the batch is written).",
            ),
            {
                "project": PROJECT,
                "items": {"type": "array", "items": CHUNK_ITEM, "minItems": 1, "maxItems": 500},
                "force_rebuild": {"type": "boolean", "default": False},
            },
            ("project", "items"),
            {"type": "object", "required": ["chunks_written", "project", "embed_model"]},
            WRITES_LOCAL,
            tools.store_chunks,
        ),
        _spec(
            "index_papers",
            describe(
                when="Make papers already fetched into the library (doiget_fetch_paper) "
                "searchable with find_chunks / query_hybrid.",
                inputs="project; refs: 1-100 DOIs or arXiv ids of stored papers; force_rebuild.",
                outputs="{ project, indexed, skipped, chunks_written, documents: [{ doc_id, "
                "status indexed|skipped, chunks, pages, reason, message }] }. A paper that is "
                "not stored, has no PDF, or whose PDF has no text (a scan) is skipped with its "
                "reason; the rest are indexed. " + _ERRORS + ", EMBEDDING_MISMATCH.",
                costs="Seconds per paper (PDF text, chunking, embedding on the CPU). Sends "
                "progress notifications when a progressToken is given.",
                side_effects="Replaces the chunks of each indexed paper in the project.",
                limits="No time limit; 100 refs per call.",
            ),
            {
                "project": PROJECT,
                "refs": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 300},
                    "minItems": 1,
                    "maxItems": 100,
                },
                "force_rebuild": {"type": "boolean", "default": False},
            },
            ("project", "refs"),
            {"type": "object", "required": ["project", "documents", "indexed", "skipped"]},
            WRITES_LOCAL,
            tools.index_papers,
        ),
    ]
    return Toolset(
        "library",
        specs,
        instructions="Library tools (find_chunks, query_hybrid) search passages of papers "
        "indexed into a project (index_papers); results carry citekey, page_span and section "
        "for citing. list_projects names the projects.",
        close=tools.close,
    )
