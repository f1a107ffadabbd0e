"""The papers tools' contracts: each tool's request model and the shape of its result.

The core's requests take a ref as text in any form :func:`doiget.refs.parse_ref`
reads; each MCP tool parses its arguments into a subclass that checks a single ref
through that same parser (so both faces take the same forms, and the spec's narrow
pattern is a subset of them). A batch's refs are checked one by one in the core, so
one bad ref is its own ``INVALID_REF`` row and the others are still fetched.
Results are ``{ok: true, ...}`` or ``{ok: false, ref?, error}``,
with only the fields that apply.
"""

# Annotations are evaluated as the classes are made: pydantic then has no strings to
# compile, which keeps building the models cheap at start-up.
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from doiget.contract import NULLABLE, NoArguments, Reply, Request
from doiget.errors import DoigetError
from doiget.integrity import Notice
from doiget.refs import MAX_REF_LENGTH, parse_ref

# The common forms; a ref in none of them is refused with the full list of forms.
_REF_DESCRIPTION = "A DOI ('10.1234/abc') or arXiv id ('2401.12345', 'hep-th/9901001')."
# Every reply that shows a paper carries its integrity notices; absent when it has none.
Integrity = list[Notice] | None


def _readable_ref(text: str) -> str:
    """``text`` when :func:`parse_ref` reads it; its INVALID_REF message otherwise."""
    try:
        parse_ref(text)
    except DoigetError as error:
        raise ValueError(error.message) from None
    return text


PaperRef = Annotated[
    str,
    Field(max_length=MAX_REF_LENGTH, description=_REF_DESCRIPTION),
    AfterValidator(_readable_ref),
]
# A batch's refs: each is read in the core, so a bad one fails alone, in its row.
BatchRef = Annotated[str, Field(max_length=4 * MAX_REF_LENGTH, description=_REF_DESCRIPTION)]
PaperRefs = Annotated[list[PaperRef], Field(min_length=1, max_length=100)]
BatchRefs = Annotated[list[BatchRef], Field(min_length=1, max_length=100)]
# Any ref the core reads; the core says what is wrong with one it cannot read.
AnyRef = str
DryRun = Annotated[bool, Field(description="Return the plan only: no network, file or log.")]
Limit = Annotated[int, Field(ge=1, le=100)]

__all__ = ["NoArguments"]  # re-exported: the papers tools that take nothing


# -- requests --------------------------------------------------------------------------


class PaperLookup(Request):
    """One paper by ref."""

    ref: AnyRef


class PaperFetch(Request):
    """One paper to fetch (or resolve and store), or only planned."""

    ref: AnyRef
    dry_run: DryRun = False


class BatchFetch(Request):
    """Several papers to fetch, or only planned (the core checks the count)."""

    refs: list[AnyRef]
    dry_run: DryRun = False


class PaperExport(Request):
    """Stored papers to export as citations (the core checks the count)."""

    refs: list[AnyRef]


class FormatReferences(Request):
    """Stored papers to format in a CSL style, or to export as bibtex, csl-json or ris."""

    refs: list[AnyRef]
    style: str = "apa"
    locale: str | None = None
    format: Literal["text", "html", "markdown"] = "text"


class LocalSearch(Request):
    """Words to find in the local library."""

    query: str
    limit: Limit = 20


class RecentPapers(Request):
    """How many of the newest stored papers."""

    limit: Limit = 20


class CitationGraph(Request):
    """A paper whose citation neighbourhood to walk (the core checks depth and direction)."""

    ref: AnyRef
    depth: int = 1
    direction: str = "references"


class StoredRef(Request):
    """A stored paper to delete (command line only)."""

    ref: AnyRef


# -- what MCP tools accept: the same requests, refs in the narrow form -------------------


class PaperLookupArgs(PaperLookup):
    ref: PaperRef


class PaperFetchArgs(PaperFetch):
    ref: PaperRef


class BatchFetchArgs(BatchFetch):
    refs: BatchRefs


class PaperExportArgs(PaperExport):
    refs: PaperRefs


class FormatReferencesArgs(FormatReferences):
    refs: PaperRefs
    # Style and locale ids are checked by the core, which names close ones.
    style: Annotated[
        str,
        Field(
            max_length=200, description="CSL style id (apa, ieee, ...) or bibtex, csl-json, ris."
        ),
    ] = "apa"
    locale: Annotated[str | None, Field(max_length=20)] = None


class LocalSearchArgs(LocalSearch):
    query: Annotated[str, Field(min_length=1, max_length=256)]


class CitationGraphArgs(CitationGraph):
    ref: PaperRef
    depth: Annotated[int, Field(ge=1, le=3)] = 1
    direction: Literal["references", "citations", "both"] = "references"


# -- replies ---------------------------------------------------------------------------


class PapersModel(Reply):
    """A papers result part: rendered with only the fields it was given."""

    sparse = True


class DenialContext(PapersModel):
    """Why a request was refused before it left (host, redirect hop, size cap)."""

    reason: str
    source: str | None = None
    attempted: str | None = None
    expected: list[str] | None = None
    hop_index: int | None = None
    cap: int | None = None
    actual: int | None = None


class ErrorBody(PapersModel):
    """What failed and what to do next."""

    code: str
    message: str
    denial_context: Annotated[DenialContext | None, NULLABLE] = None


class PapersReply(PapersModel):
    """Every papers result has ``ok``; a failure (isError) is ``{ok: false, ref?, error}``."""

    ok: bool


class RefShape(PapersModel):
    """A ref as parsed (in dry-run plans): ``{doi: ...}`` or ``{arxiv: ...}``."""

    doi: str | None = None
    arxiv: str | None = None


class PdfSource(PapersModel):
    key: str
    candidate_hosts: list[str]


class Plan(PapersModel):
    """What a fetch would do, without doing it."""

    metadata_sources: list[str]
    pdf_sources: list[PdfSource]
    redirect_allowlists_loaded: list[str]
    candidate_hosts_are_upper_bound: bool
    target_pdf_path: Annotated[str | None, NULLABLE] = None
    target_metadata_path: str
    would_append_provenance: bool


class Budget(PapersModel):
    """The rate limits a plan runs under."""

    global_per_sec: float
    per_source_min_gap_ms: int


class Resolved(PapersReply):
    """Authoritative metadata, and where an Open Access copy is."""

    ref: str | RefShape | None = None
    source: str | None = None
    resolver_profile: str | None = None
    license: str | None = None
    oa_url: Annotated[str | None, NULLABLE] = None
    oa_status: Annotated[str | None, NULLABLE] = None
    metadata: dict[str, Any] | None = None
    schema_version: str | None = None
    integrity: Integrity = None


class Planned(PapersReply):
    """The dry-run fields."""

    dry_run: bool | None = None
    plan: Plan | None = None
    rate_limit_budget: Budget | None = None


class FetchPlan(PapersReply):
    """A fetch's plan: what it would do, without doing it."""

    dry_run: bool
    ref: RefShape
    plan: Plan
    rate_limit_budget: Budget


class BatchPlans(PapersReply):
    """A batch's plans, one per ref, in order."""

    dry_run: bool
    results: list[FetchPlan]
    rate_limit_budget: Budget


class StoredMetadata(Resolved, Planned):
    """doiget_metadata_only: resolved metadata, or the plan."""


class Fetched(Planned):
    """A stored PDF, or the plan."""

    ref: str | RefShape | None = None
    source: str | None = None
    resolver_profile: str | None = None
    path: str | None = None
    license: str | None = None
    size_bytes: int | None = None
    schema_version: str | None = None
    integrity: Integrity = None


class BatchRow(Fetched):
    """One ref's fetch result (or plan); a failed ref carries its error."""

    error: ErrorBody | None = None


class BatchSummary(PapersModel):
    total: int
    ok: int
    failed: int


class BatchFetched(PapersReply):
    """One result per ref, in order (fetch results, or plans with dry_run)."""

    results: list[BatchRow] | None = None
    summary: BatchSummary | None = None
    dry_run: bool | None = None
    rate_limit_budget: Budget | None = None


class StoredPaper(PapersReply):
    """A stored paper's metadata and files."""

    ref: str | None = None
    key: str | None = None
    metadata: dict[str, Any] | None = None
    metadata_path: str | None = None
    pdf_path: Annotated[str | None, NULLABLE] = None
    integrity: Integrity = None


class PdfLocation(PapersReply):
    ref: str | None = None
    path: str | None = None


class LocalHit(PapersModel):
    """A stored paper in a listing."""

    ref: str
    key: str
    title: Annotated[str | None, NULLABLE] = None
    authors: list[str]
    year: Annotated[int | None, NULLABLE] = None
    venue: Annotated[str | None, NULLABLE] = None
    doi: Annotated[str | None, NULLABLE] = None
    arxiv_id: Annotated[str | None, NULLABLE] = None
    fetched_at: Annotated[str | None, NULLABLE] = None
    has_pdf: Annotated[bool, Field(description="Whether the entry has a stored PDF.")]
    path: Annotated[
        str | None,
        NULLABLE,
        Field(description="The stored PDF's local path; null for a metadata-only entry."),
    ] = None
    integrity: Integrity = None


class Listing(PapersReply):
    """Stored papers, best match or newest first."""

    query: str | None = None
    count: int | None = None
    results: list[LocalHit] | None = None


class ProviderState(Reply):
    """Whether a provider's settings are present, and whether it would be tried now."""

    configured: bool
    healthy: bool


class BrowserTier(Reply):
    """Whether scrape_page's browser tier can run, and why not when it cannot."""

    usable: bool
    reason: Annotated[str | None, NULLABLE] = None


class LibraryBackend(Reply):
    """The passage index's embedding model and where its vectors are kept."""

    embed_model: str
    backend: Literal["sqlite", "qdrant"]


class Capabilities(PapersReply):
    """Which sources this instance may use (never key material)."""

    oa_enabled: bool | None = None
    metadata_sources: list[str] | None = None
    tdm_enabled: bool | None = None
    tdm_elsevier: bool | None = None
    tdm_aps: bool | None = None
    tdm_springer: bool | None = None
    tdm_not_installed: Annotated[
        list[str] | None,
        Field(description="Granted TDM publishers whose source is not installed (the tdm extra)."),
    ] = None
    rate_limit_per_sec: float | None = None
    tdm_agreed_at: dict[str, str] | None = None
    # Beside the spec's keys: what an agent plans its calls with.
    toolsets: Annotated[list[str] | None, Field(description="The toolsets served.")] = None
    email_set: Annotated[
        bool | None, Field(description="Whether DOIGET_EMAIL is set (Unpaywall needs it).")
    ] = None
    scholar_providers: dict[str, ProviderState] | None = None
    web_search_providers: dict[str, ProviderState] | None = None
    patent_providers: dict[str, ProviderState] | None = None
    browser_tier: BrowserTier | None = None
    library: LibraryBackend | None = None
    retraction_checks: Annotated[
        bool | None,
        Field(description="Whether academic_search and scrape_page report retractions."),
    ] = None


class Health(PapersReply):
    """Whether the store and the log are usable."""

    version: str | None = None
    schema_version: str | None = None
    store_root: str | None = None
    store_writable: bool | None = None
    log_path: str | None = None
    log_writable: bool | None = None
    toolsets: list[str] | None = None
    data_dir: str | None = None
    config_path: str | None = None
    config_exists: bool | None = None
    email_set: Annotated[
        bool | None,
        Field(description="Whether DOIGET_EMAIL is set; without it Unpaywall is skipped."),
    ] = None
    browser_tier: Annotated[
        str | None,
        Field(
            description="scrape_page's browser tier: 'available (...)' or 'unavailable: why "
            "and what to install'. The browser itself starts only when a page needs it."
        ),
    ] = None
    unreadable_entries: Annotated[
        int | None,
        Field(
            description="Metadata files the library cannot read (not UTF-8, not TOML, a "
            "link out of the store ...): left out of listings and search until fixed."
        ),
    ] = None
    unreadable_files: Annotated[
        list[str] | None,
        Field(description="The first 20 of them: 'file name: why, and what to do'."),
    ] = None
    problems: list[str] | None = None


class GraphNode(PapersModel):
    id: str
    depth: int
    doi: Annotated[str | None, NULLABLE] = None
    title: Annotated[str | None, NULLABLE] = None
    year: Annotated[int | None, NULLABLE] = None
    first_author: Annotated[str | None, NULLABLE] = None


class GraphEdge(PapersModel):
    citing: str
    cited: str


class GraphCaps(PapersModel):
    depth: int
    total: int
    per_paper: int


class Graph(PapersReply):
    """A citation neighbourhood: nodes, edges, and whether a cap cut it short."""

    root: GraphNode | None = None
    direction: str | None = None
    depth: int | None = None
    count: int | None = None
    nodes: list[GraphNode] | None = None
    edges: list[GraphEdge] | None = None
    truncated: bool | None = None
    caps: GraphCaps | None = None


class BibtexExport(PapersReply):
    count: int | None = None
    bibtex: str | None = None


class CslExport(PapersReply):
    count: int | None = None
    items: list[dict[str, Any]] | None = None


class FormattedEntry(PapersModel):
    """One work's bibliography entry and its in-text citation."""

    ref: str
    entry: Annotated[str | None, NULLABLE] = None
    citation: str


class FormattedReferences(PapersReply):
    """References in a style (entries in the style's order), or an export's text/items."""

    style: str | None = None
    locale: str | None = None
    format: str | None = None
    count: int | None = None
    references: list[FormattedEntry] | None = None
    citation: str | None = None
    text: str | None = None
    items: list[dict[str, Any]] | None = None


class StyleList(PapersReply):
    """The CSL style ids a reference can be formatted in (command line only)."""

    count: int
    styles: list[str]


class RisExport(PapersReply):
    count: int | None = None
    ris: str | None = None


class Removed(PapersReply):
    """A deleted entry and the files removed (command line only)."""

    ref: str
    removed: list[str]


class Reindexed(PapersReply):
    """The search index rebuilt from the metadata files (command line only)."""

    indexed: int
    total: int


class IntegrityCheck(Request):
    """Stored papers to check again against Crossref (all of them when none is named);
    without ``check``, what their entries record, with no request sent."""

    refs: list[AnyRef] = Field(default_factory=list)
    check: bool = True


class IntegrityRow(PapersModel):
    """What a re-check found for one stored paper."""

    ref: str
    status: Literal["new_notices", "unchanged", "not_checked", "failed", "recorded"]
    new: Annotated[
        Integrity, Field(description="Notices Crossref lists that were not recorded before.")
    ] = None
    integrity: Integrity = None
    note: str | None = None
    error: ErrorBody | None = None


class IntegrityReport(PapersReply):
    """Stored papers re-checked (or, without a check, those with notices recorded), with
    counts (command line only)."""

    checked: int
    changed: int
    not_checked: int
    failed: int
    results: list[IntegrityRow]
