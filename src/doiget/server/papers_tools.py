"""The papers toolset: the 13 doiget_* tools and the stored papers as resources.

Handlers are thin: they call :class:`doiget.papers.service.Papers` (built on the
first call, so listing tools loads no network or store code) and return its
result shapes unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from doiget.health import check_health
from doiget.refs import MCP_REF_PATTERN
from doiget.runtime import Runtime
from doiget.server.toolset import (
    Hints,
    LazyCore,
    ResourceBody,
    ResourceItem,
    Result,
    ToolCall,
    Toolset,
    ToolSpec,
    describe,
    object_schema,
)

if TYPE_CHECKING:
    from doiget.papers.service import Papers

# The spec's ref contract (papers-mcp-tools §4).
REF_SCHEMA: Final = {
    "type": "string",
    "minLength": 7,
    "maxLength": 256,
    "pattern": MCP_REF_PATTERN,
}
REFS_SCHEMA: Final = {"type": "array", "items": REF_SCHEMA, "minItems": 1, "maxItems": 100}
DRY_RUN_SCHEMA: Final = {"type": "boolean", "default": False}
LIMIT_SCHEMA: Final = {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}

DENIAL_SCHEMA: Final = {
    "type": ["object", "null"],
    "properties": {
        "reason": {"type": "string"},
        "source": {"type": "string"},
        "attempted": {"type": "string"},
        "expected": {"type": "array", "items": {"type": "string"}},
        "hop_index": {"type": "integer"},
        "cap": {"type": "integer"},
        "actual": {"type": "integer"},
    },
}
ERROR_SCHEMA: Final = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "denial_context": DENIAL_SCHEMA,
    },
}
URI_PREFIX: Final = "doiget://paper/"
_KEY: Final = re.compile(r"(?:doi|arxiv)_[A-Za-z0-9._-]{1,250}")


def _output(**properties: Any) -> dict[str, Any]:
    """Success fields are listed; ``ok`` and, on failure, ``error`` are always there."""
    return {
        "type": "object",
        "required": ["ok"],
        "properties": {"ok": {"type": "boolean"}, "error": ERROR_SCHEMA, **properties},
    }


_STR: Final = {"type": "string"}
_NULLABLE_STR: Final = {"type": ["string", "null"]}
_INT: Final = {"type": "integer"}
_OBJ: Final = {"type": "object"}
_ARR: Final = {"type": "array"}
_DRY: Final = {"dry_run": {"type": "boolean"}, "plan": _OBJ, "rate_limit_budget": _OBJ}

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
        self.close = self._core.close

    def _build(self) -> Papers:
        from doiget.papers.service import Papers

        return Papers(self.runtime)

    @property
    def papers(self) -> Papers:
        return self._core.get()

    # -- handlers ---------------------------------------------------------------

    async def resolve(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return await self.papers.resolve(args["ref"])

    async def fetch(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        if args.get("dry_run"):
            return self.papers.plan(args["ref"])
        return await self.papers.fetch(args["ref"])

    async def metadata_only(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        if args.get("dry_run"):
            return self.papers.plan(args["ref"], metadata_only=True)
        return await self.papers.metadata_only(args["ref"])

    async def batch(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        refs = list(args["refs"])
        if args.get("dry_run"):
            return self.papers.plan_batch(refs)

        async def report(done: int, total: int, row: dict[str, Any]) -> None:
            state = "ok" if row.get("ok") else row.get("error", {}).get("code", "failed")
            await call.progress(done, total, f"{row.get('ref')}: {state}")

        return await self.papers.batch(refs, progress=report)

    async def info(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.info(args["ref"])

    async def search(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.search(args["query"], int(args.get("limit", 20)))

    async def recent(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.recent(int(args.get("limit", 20)))

    async def pdf_path(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.pdf_path(args["ref"])

    async def capability(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return {"ok": True, **self.runtime.profile.to_redacted_dict()}

    async def health(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return check_health(self.runtime.settings)

    async def graph(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return await self.papers.graph(
            args["ref"],
            depth=int(args.get("depth", 1)),
            direction=str(args.get("direction", "references")),
        )

    async def bibtex(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.bibtex(list(args["refs"]))

    async def csl(self, args: Mapping[str, Any], call: ToolCall) -> Result:
        return self.papers.csl(list(args["refs"]))

    # -- resources --------------------------------------------------------------

    async def list_resources(self) -> list[ResourceItem]:
        items: list[ResourceItem] = []
        for entry in self.papers.store.entries():
            title = entry.document.get("title")
            label = str(title) if isinstance(title, str) else entry.ref.canonical
            uri = URI_PREFIX + entry.key
            items.append(ResourceItem(uri, entry.key, label, "application/json"))
            if entry.has_pdf:
                size = entry.pdf_path.stat().st_size
                items.append(
                    ResourceItem(uri + "/pdf", entry.key + ".pdf", label, "application/pdf", size)
                )
        return items

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
            if not entry.has_pdf:
                return None
            return ResourceBody(uri, "application/pdf", data=entry.pdf_path.read_bytes())
        text = json.dumps(
            {"ref": entry.ref.canonical, "key": entry.key, "metadata": entry.document},
            ensure_ascii=False,
            default=str,
        )
        return ResourceBody(uri, "application/json", text=text)


def papers_toolset(runtime: Runtime) -> Toolset:
    """The papers toolset for one server."""
    tools = PapersTools(runtime)
    ref_only = object_schema({"ref": REF_SCHEMA}, ("ref",))
    ref_dry = object_schema({"ref": REF_SCHEMA, "dry_run": DRY_RUN_SCHEMA}, ("ref",))
    refs_only = object_schema({"refs": REFS_SCHEMA}, ("refs",))
    nothing = object_schema({})
    # ``ref`` is the text given, or the parsed RefShape object in a dry-run plan.
    either_ref = {"type": ["string", "object"]}
    fetched = {
        "ref": either_ref,
        "source": _STR,
        "resolver_profile": _STR,
        "path": _STR,
        "license": _STR,
        "size_bytes": _INT,
        "schema_version": _STR,
    }
    metadata = {
        "ref": either_ref,
        "source": _STR,
        "resolver_profile": _STR,
        "license": _STR,
        "oa_url": _NULLABLE_STR,
        "oa_status": _NULLABLE_STR,
        "metadata": _OBJ,
        "schema_version": _STR,
    }
    listing = {"count": _INT, "results": _ARR}
    specs = [
        ToolSpec(
            "doiget_resolve_paper",
            describe(
                when="You need authoritative metadata (title, authors, venue, year, licence, "
                "retraction status) for a DOI or arXiv id, without storing anything.",
                inputs="ref: DOI ('10.1234/abc') or arXiv id ('2401.12345', 'arXiv:2401.12345').",
                outputs="{ ok: true, ref, source, resolver_profile, license, oa_url, oa_status, "
                "metadata, schema_version } or { ok: false, ref, error: { code, message, "
                "denial_context? } }.",
                costs="1-2 s: Crossref + Unpaywall (arXiv API for arXiv ids), plus enabled "
                "optional sources.",
                side_effects="Appends one row to the provenance log. Writes nothing to the store.",
                limits="Max 5 upstream requests/sec overall. dry_run is not accepted.",
            ),
            ref_only,
            _output(**metadata),
            APPENDS_LOG,
            tools.resolve,
        ),
        ToolSpec(
            "doiget_fetch_paper",
            describe(
                when="User wants to download a paper PDF given a DOI or arXiv id.",
                inputs="ref: DOI ('10.1234/abc') or arXiv id ('2401.12345'); dry_run (optional "
                "bool): return the plan only.",
                outputs="{ ok: true, ref, source, resolver_profile, path, license, size_bytes, "
                "schema_version } or { ok: false, ref, error: { code, message, "
                "denial_context? } }; with dry_run: { ok: true, dry_run: true, ref, plan, "
                "rate_limit_budget }.",
                costs="1-3 s network call. May fail if not Open Access (NO_OA_AVAILABLE).",
                side_effects="Writes the PDF and its metadata TOML to the store. Appends rows to "
                "the provenance log. dry_run: none.",
                limits="Max 5 fetches/sec. Use doiget_batch_fetch for >5 refs. PDFs over 100 MB "
                "are refused.",
            ),
            ref_dry,
            _output(**fetched, **_DRY),
            WRITES_STORE,
            tools.fetch,
        ),
        ToolSpec(
            "doiget_metadata_only",
            describe(
                when="User wants metadata for a DOI / arXiv id without paying for or being "
                "noticed by a PDF download.",
                inputs="ref (DOI or arXiv id), dry_run (optional bool).",
                outputs="{ ok: true, ref, source, resolver_profile, license?, oa_url: string|null, "
                "metadata, schema_version } or { ok: false, ref, error }.",
                costs="1-2 s metadata round-trip. No publisher fetch.",
                side_effects="Appends a provenance row tagged 'metadata_only' (unless dry_run). "
                "Writes the metadata TOML to the store.",
                limits="Subject to the same rate cap as fetch_paper (5/sec). The OA URL is "
                "reported but never followed.",
            ),
            ref_dry,
            _output(**metadata, **_DRY),
            WRITES_STORE,
            tools.metadata_only,
        ),
        ToolSpec(
            "doiget_batch_fetch",
            describe(
                when="You need several papers (more than a few) downloaded in one call.",
                inputs="refs: array of 1-100 DOIs / arXiv ids; dry_run (optional bool).",
                outputs="{ ok: true, results: [per-ref fetch result; errors carry "
                "error.denial_context, null when none], summary: { total, ok, failed } }; "
                "with dry_run: { ok: true, dry_run: true, results: [plans], rate_limit_budget }.",
                costs="About 0.6 s per ref at the 5/sec cap. Sends progress notifications, one "
                "per finished ref, when a progressToken is given.",
                side_effects="Writes PDFs and TOML files; appends provenance rows. Every ref is "
                "validated before any work starts.",
                limits="At most 100 refs. Max 5 requests/sec and 5 in flight.",
            ),
            object_schema({"refs": REFS_SCHEMA, "dry_run": DRY_RUN_SCHEMA}, ("refs",)),
            _output(
                results=_ARR, summary=_OBJ, dry_run={"type": "boolean"}, rate_limit_budget=_OBJ
            ),
            WRITES_STORE,
            tools.batch,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_info",
            describe(
                when="You want the stored metadata of a paper already in the local library.",
                inputs="ref: DOI or arXiv id of a stored paper.",
                outputs="{ ok: true, ref, key, metadata, metadata_path, pdf_path|null } or "
                "{ ok: false, ref, error } (NOT_FOUND when not stored).",
                costs="Local file read, milliseconds. No network.",
                side_effects="None.",
                limits="Only papers fetched or stored before.",
            ),
            ref_only,
            _output(ref=_STR, key=_STR, metadata=_OBJ, metadata_path=_STR, pdf_path=_NULLABLE_STR),
            READS_LOCAL,
            tools.info,
        ),
        ToolSpec(
            "doiget_search_local",
            describe(
                when="You want papers in the local library matching words in their title, "
                "authors, venue, abstract or year.",
                inputs="query: words (the last may be a prefix); limit (optional, 1-100, "
                "default 20).",
                outputs="{ ok: true, query, count, results: [{ ref, key, title, authors, year, "
                "venue, pdf_path, fetched_at }] }.",
                costs="Local index lookup, milliseconds. No network.",
                side_effects="May rebuild the local search index if it is missing or stale.",
                limits="At most 100 results; query up to 256 characters.",
            ),
            object_schema(
                {
                    "query": {"type": "string", "minLength": 1, "maxLength": 256},
                    "limit": LIMIT_SCHEMA,
                },
                ("query",),
            ),
            _output(query=_STR, **listing),
            READS_LOCAL,
            tools.search,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_list_recent",
            describe(
                when="You want the papers most recently added to the local library.",
                inputs="limit (optional, 1-100, default 20).",
                outputs="{ ok: true, count, results: [{ ref, key, title, authors, year, venue, "
                "pdf_path, fetched_at }] } newest first.",
                costs="Local index lookup, milliseconds. No network.",
                side_effects="May rebuild the local search index if it is missing or stale.",
                limits="At most 100 entries.",
            ),
            object_schema({"limit": LIMIT_SCHEMA}),
            _output(**listing),
            READS_LOCAL,
            tools.recent,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_paper_pdf_path",
            describe(
                when="You need the local file path of a stored PDF to hand to another tool.",
                inputs="ref: DOI or arXiv id of a stored paper.",
                outputs="{ ok: true, ref, path } or { ok: false, ref, error } (NOT_FOUND when "
                "not stored or stored without a PDF).",
                costs="Local lookup, milliseconds. No network.",
                side_effects="None. Does not read, parse or transmit the PDF content.",
                limits="Only papers fetched before.",
            ),
            ref_only,
            _output(ref=_STR, path=_STR),
            READS_LOCAL,
            tools.pdf_path,
        ),
        ToolSpec(
            "doiget_capability_profile",
            describe(
                when="Call this first: it tells which sources this instance may use, so you can "
                "plan which fetches can succeed.",
                inputs="None.",
                outputs="{ ok: true, oa_enabled, metadata_sources, tdm_enabled, tdm_elsevier, "
                "tdm_aps, tdm_springer, rate_limit_per_sec, tdm_agreed_at }.",
                costs="None: answered from memory.",
                side_effects="None.",
                limits="Redacted: never contains key material. Fixed for the server's lifetime.",
            ),
            nothing,
            _output(
                oa_enabled={"type": "boolean"},
                metadata_sources=_ARR,
                tdm_enabled={"type": "boolean"},
                rate_limit_per_sec={"type": "number"},
            ),
            READS_LOCAL,
            tools.capability,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_health",
            describe(
                when="You want to check that doiget can work: store and log writable, version, "
                "schema.",
                inputs="None.",
                outputs="{ ok, version, schema_version, store_root, store_writable, log_path, "
                "log_writable, toolsets, problems? }.",
                costs="A few local file checks, milliseconds.",
                side_effects="None.",
                limits="None.",
            ),
            nothing,
            _output(
                version=_STR,
                schema_version=_STR,
                store_writable={"type": "boolean"},
                log_writable={"type": "boolean"},
            ),
            READS_LOCAL,
            tools.health,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_expand_citation_graph",
            describe(
                when="You want the papers a work cites and/or the papers citing it, a few "
                "levels out.",
                inputs="ref: DOI or arXiv id; depth (optional, 1-3, default 1); direction "
                "(optional: references, citations or both; default references).",
                outputs="{ ok: true, root, direction, depth, count, nodes: [{ id, depth, doi, "
                "title, year, first_author }], edges: [{ citing, cited }], truncated, caps }.",
                costs="One OpenAlex request per expanded paper, under the 5/sec cap.",
                side_effects="None: nothing is stored or logged.",
                limits="Hard caps: depth <= 3, at most 100 nodes, 20 neighbours per paper "
                "(truncated: true when a cap bites). Needs OpenAlex enabled "
                "(DOIGET_ENABLE_OPENALEX=1), else CAPABILITY_DENIED.",
            ),
            object_schema(
                {
                    "ref": REF_SCHEMA,
                    "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1},
                    "direction": {
                        "type": "string",
                        "enum": ["references", "citations", "both"],
                        "default": "references",
                    },
                },
                ("ref",),
            ),
            _output(root=_OBJ, nodes=_ARR, edges=_ARR, truncated={"type": "boolean"}, count=_INT),
            READS_REMOTE,
            tools.graph,
        ),
        ToolSpec(
            "doiget_bibtex_export",
            describe(
                when="You need BibTeX for one or more papers in the local library.",
                inputs="refs: array of 1-100 DOIs / arXiv ids of stored papers.",
                outputs="{ ok: true, count, bibtex } (keys like kucsko2013nanometre, unique "
                "within the text) or { ok: false, error } (NOT_FOUND names the missing ref).",
                costs="Local, milliseconds. No network.",
                side_effects="None.",
                limits="At most 100 refs; every ref must be stored.",
            ),
            refs_only,
            _output(count=_INT, bibtex=_STR),
            READS_LOCAL,
            tools.bibtex,
            ref_field=None,
        ),
        ToolSpec(
            "doiget_csl_export",
            describe(
                when="You need CSL-JSON (for citeproc, pandoc, Zotero) for papers in the local "
                "library.",
                inputs="refs: array of 1-100 DOIs / arXiv ids of stored papers.",
                outputs="{ ok: true, count, items: [CSL-JSON item] } or { ok: false, error }.",
                costs="Local, milliseconds. No network.",
                side_effects="None.",
                limits="At most 100 refs; every ref must be stored.",
            ),
            refs_only,
            _output(count=_INT, items=_ARR),
            READS_LOCAL,
            tools.csl,
            ref_field=None,
        ),
    ]
    return Toolset(
        "papers",
        specs,
        instructions="Call doiget_capability_profile first to learn which sources this instance "
        "may use. Refs are DOIs ('10.1234/abc') or arXiv ids ('2401.12345'). Every doiget_* "
        "result is { ok: true, ... } or { ok: false, error: { code, message } }; the message "
        "says what to do next.",
        list_resources=tools.list_resources,
        read_resource=tools.read_resource,
        close=tools.close,
    )
