"""The results of the web tools: one model per tool, both its output shape and its schema.

Python names are snake_case, the wire's are their camelCase aliases. A field left
unset is absent from the wire form (:meth:`WebResult.wire`), so an optional fact a
tool did not find is left out rather than sent as null. Each result knows which
tool made it: what it adds to a research session (:meth:`WebResult.found_sources`)
and the one line that stands for it when it is linked (:meth:`WebResult.headline`).
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, GetJsonSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from doiget.contract import Reply
from doiget.web.requests import ExportFormat, SearchType
from doiget.wording import counted

Trust = Literal["untrusted-external-content"]
AuthorityTier = Literal["high", "medium", "low"]
UnitScore = Annotated[float, Field(ge=0, le=1)]
# A recorded source as research sessions take it: {url, title, kind, doi?, ...}.
FoundSource = dict[str, Any]


class Shape(Reply):
    """A wire object: camelCase on the wire, nothing undeclared.

    Undeclared fields are refused when a result is built, so the schema lists every
    field there is; it does not repeat that as ``additionalProperties``, which would
    only lengthen what every client reads.
    """

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        schema.pop("additionalProperties", None)
        return schema

    def wire(self) -> dict[str, Any]:
        """The JSON object sent to callers: aliases, unset fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class WebResult(Shape):
    """A tool's whole result."""

    trust: Trust

    def wire(self) -> dict[str, Any]:
        """The JSON object sent to callers, its trust label last."""
        body = super().wire()
        body["trust"] = body.pop("trust")
        return body

    def found_sources(self) -> list[FoundSource]:
        """What this result adds to a research session (nothing, unless a tool says)."""
        return []

    def headline(self) -> str:
        """One line saying what the result holds (the summary of a linked result)."""
        return type(self).__name__


# -- shared shapes ------------------------------------------------------------------


class ZeroResultHints(Shape):
    """Why a search found nothing and what to try next."""

    reason: Literal["filters_too_restrictive", "no_match"]
    filters_applied: list[str]
    suggested_actions: list[str]
    epistemic_warning: str


class RetractionStatus(Shape):
    """Crossref's most severe notice updating a work."""

    retracted: bool
    kind: Literal["retraction", "expression_of_concern", "correction"]
    date: str | None = None
    notice_doi: str | None = None
    source: Literal["retraction-watch", "publisher"] | None = None


class LinkedResult(Shape):
    """A large result returned as a resource link, readable for 30 minutes."""

    resource: str
    bytes: int
    mime_type: str
    summary: str
    expires_at: str
    linked: Literal[True]
    content_size_bytes: int | None = None
    trust: Trust


# -- web_search ---------------------------------------------------------------------


class SourceReputation(Shape):
    """A curated, descriptive tier for a host (absent: unknown, not bad)."""

    tier: str
    basis: str
    note: str | None = None


class SearchHit(Shape):
    """One web search result."""

    title: str
    url: str
    snippet: str
    display_link: str
    source_reputation: SourceReputation | None = None
    claim_signal: str | None = None


class WebSearchResult(WebResult):
    """web_search."""

    urls: list[str]
    query: str
    result_count: int
    results: list[SearchHit]
    notes: list[str] | None = Field(default=None, description="Filters a provider could not apply.")
    hints: ZeroResultHints | None = None

    def found_sources(self) -> list[FoundSource]:
        return [{"url": hit.url, "title": hit.title, "kind": "web"} for hit in self.results]

    def headline(self) -> str:
        return f"{counted(self.result_count, 'web result')} for {self.query!r}"


# -- scrape_page --------------------------------------------------------------------


class CitationFacts(Shape):
    """What a citation is built from ("" where unknown)."""

    title: str
    author: str
    site: str
    date: str


class FormattedCitation(Shape):
    """Ready-to-paste citations."""

    apa: str
    mla: str


class Citation(Shape):
    """How to cite a read page."""

    url: str
    accessed_date: str
    metadata: CitationFacts
    formatted: FormattedCitation


class PageMetadata(Shape):
    """The page's own title and author."""

    title: str
    author: str


class StructuredData(Shape):
    """Machine-readable metadata found in the page."""

    json_ld: list[Any] | None = None
    open_graph: dict[str, Any] | None = None
    citation: dict[str, Any] | None = None


class ForumSignals(Shape):
    """A forum post's engagement as its page declares it (Reddit's JSON-LD)."""

    platform: Literal["reddit"]
    upvotes: int = Field(ge=0)
    comments: int = Field(ge=0)
    date_published: str | None = None
    author_name: str | None = None
    credibility_note: str | None = Field(
        default=None, description="set when upvotes < 20: the count is too small to trust"
    )


class PageFacts(Shape):
    """What every read page carries, whether raw or extracted."""

    url: str
    content: str
    content_type: str
    content_length: int
    truncated: bool
    estimated_tokens: int
    size_category: Literal["small", "medium", "large", "very_large"]
    citation: Citation
    source_type: str
    authority_tier: AuthorityTier
    domain_category: str


class ScrapePageResult(PageFacts, WebResult):
    """scrape_page."""

    raw: bool | None = None
    extracted_by: str | None = None
    extraction_quality: Literal["complete", "partial"] | None = None
    extraction_note: str | None = Field(
        default=None,
        description="why extraction stopped short of the last tier (e.g. the page needs "
        "the browser tier, which is not installed)",
    )
    metadata: PageMetadata | None = None
    structured_data: StructuredData | None = None
    forum_signals: ForumSignals | None = None
    detected_doi: str | None = None
    retraction_status: RetractionStatus | None = None

    def found_sources(self) -> list[FoundSource]:
        page: FoundSource = {"url": self.url, "title": self.citation.metadata.title or self.url}
        if self.detected_doi:
            return [{**page, "doi": self.detected_doi, "kind": "paper"}]
        return [{**page, "kind": "web"}]

    def headline(self) -> str:
        title = self.metadata.title if self.metadata is not None else ""
        state = ", truncated" if self.truncated else ""
        about = f": {title}" if title and title != self.url else ""
        return (
            f"{self.content_type or 'content'} of {self.url} "
            f"({self.content_length} bytes{state}){about}"
        )


# -- search_and_scrape --------------------------------------------------------------


class Scores(Shape):
    """Transparent 0-1 scores; overall weighs the other four."""

    overall: UnitScore
    relevance: UnitScore
    freshness: UnitScore
    authority: UnitScore
    content_quality: UnitScore


class CombinedSource(Shape):
    """One page read for search_and_scrape."""

    url: str
    title: str
    published_at: str | None = None
    content: str
    content_type: str
    trust: Trust
    scores: Scores
    source_type: str
    authority_tier: AuthorityTier
    domain_category: str
    extraction_quality: Literal["complete", "partial"]
    word_count: int
    claim_signal: str | None = None
    key_sentences: list[str] | None = None


class ScrapeFailure(Shape):
    """A page that could not be read (never fatal to the call)."""

    url: str
    kind: str
    reason: str
    retryable: bool
    suggested_action: str


class CombinedSummary(Shape):
    """Counts for the whole call."""

    urls_searched: int
    urls_scraped: int
    urls_failed: int
    duplicates_removed: int
    filtered_out: int
    sparse_sources: int
    processing_time_ms: int


class SearchAndScrapeResult(WebResult):
    """search_and_scrape."""

    query: str
    status: Literal["complete", "partial", "failed"]
    sources: list[CombinedSource]
    combined_content: str
    scrape_failures: list[ScrapeFailure]
    summary: CombinedSummary
    hints: ZeroResultHints | None = None
    note: str | None = None

    def found_sources(self) -> list[FoundSource]:
        return [{"url": s.url, "title": s.title, "kind": "web"} for s in self.sources]

    def headline(self) -> str:
        pages = counted(len(self.sources), "page")
        return f"{pages} read and combined for {self.query!r} ({self.status})"


# -- academic_search ----------------------------------------------------------------


class AcademicPaper(Shape):
    """One scholarly paper."""

    title: str
    url: str
    source: str
    doi: str | None = None
    authors: list[str] | None = None
    journal: str | None = None
    year: int | None = None
    abstract: str | None = None
    citation_count: int | None = None
    open_access: bool | None = None
    pdf_url: str | None = None
    retraction_status: RetractionStatus | None = None
    ref: str | None = Field(default=None, description="Give it to doiget_fetch_paper.")


class AcademicSearchResult(WebResult):
    """academic_search."""

    papers: list[AcademicPaper]
    query: str
    total_results: int
    result_count: int
    source: str = Field(description="The index that answered.")
    notes: list[str] | None = None
    hints: ZeroResultHints | None = None

    def found_sources(self) -> list[FoundSource]:
        from doiget.web.research import paper_sources

        return paper_sources([paper.wire() for paper in self.papers])

    def headline(self) -> str:
        return f"{counted(self.result_count, 'paper')} for {self.query!r}"


# -- patent_search ------------------------------------------------------------------


class PatentRecord(Shape):
    """One patent."""

    title: str
    number: str
    url: str
    abstract: str | None = None
    assignee: str | None = None
    inventor: str | None = None
    filed: str | None = None
    granted: str | None = None
    pdf: str | None = None
    status: str | None = None


class AssigneeCluster(Shape):
    """How many of a landscape's patents one assignee holds."""

    assignee: str
    count: int


class PatentSearchResult(WebResult):
    """patent_search."""

    patents: list[PatentRecord]
    query: str
    search_type: SearchType
    result_count: int
    source: str
    notes: list[str] | None = None
    assignee_clusters: list[AssigneeCluster] | None = None
    hints: ZeroResultHints | None = None

    def found_sources(self) -> list[FoundSource]:
        return [{"url": p.url, "title": p.title, "kind": "patent"} for p in self.patents]

    def headline(self) -> str:
        return f"{counted(self.result_count, 'patent')} for {self.query!r}"


# -- research sessions --------------------------------------------------------------


class ResearchStep(Shape):
    """One recorded step (revised steps name their reviser in supersededBy)."""

    step_number: int
    search_step: str
    next_step_needed: bool
    recorded_at: str
    reasoning: str | None = None
    knowledge_gap: str | None = None
    revises_step: int | None = None
    branch_from_step: int | None = None
    branch_id: str | None = None
    confidence: float | None = None
    rejected_approaches: list[str] | None = None
    is_revision: bool | None = None
    superseded_by: int | None = None


class StepLine(Shape):
    """A step in one line."""

    step_number: int
    one_liner: str
    branch_id: str
    confidence: float | None = None
    revises_step: int | None = None
    superseded_by: int | None = None


class KnowledgeGap(Shape):
    """A gap a step noted."""

    gap: str
    found_in_step: int


class Branch(Shape):
    """A named line of steps."""

    branch_id: str
    from_step: int | None = None
    steps: list[int]


class SessionSource(Shape):
    """A source a tool found while linked to the session."""

    url: str
    title: str
    kind: Literal["web", "paper", "patent"]
    tool: str
    found_at: str
    doi: str | None = None
    authors: list[str] | None = None
    year: int | None = None
    journal: str | None = None


class SessionState(WebResult):
    """What every whole-session view says."""

    session_id: str
    research_goal: str
    is_complete: bool
    started_at: str
    updated_at: str
    completed_at: str | None = None
    step_count: int
    source_count: int
    sources_dropped: int | None = None
    branches: list[Branch] | None = None
    gaps: list[KnowledgeGap]
    sources: list[SessionSource]


class StepRecorded(SessionState):
    """sequential_search: every step while there are few, else a summary and the last ones."""

    response_mode: Literal["full", "summary"]
    current_step: int
    steps: list[ResearchStep] | None = None
    summary: str | None = None
    step_index: list[StepLine] | None = None
    last_steps: list[ResearchStep] | None = None
    warning: str | None = None
    expires_in_seconds: int


class SessionSummary(SessionState):
    """get_research_session without stepId: a summary, an index and the last steps."""

    response_mode: Literal["summary"]
    summary: str
    step_index: list[StepLine]
    last_steps: list[ResearchStep]


class OneStep(WebResult):
    """get_research_session with stepId: that step in full."""

    session_id: str
    response_mode: Literal["step"]
    research_goal: str
    step: ResearchStep


LinkState = Literal["live", "dead", "refused", "unchecked"]


class ResearchExportResult(WebResult):
    """research_export."""

    session_id: str
    format: ExportFormat
    research_goal: str
    step_count: int
    source_count: int
    started_at: str
    exported_at: str
    document: str
    link_status: dict[str, LinkState] | None = None

    def headline(self) -> str:
        return (
            f"{self.format} export of research session {self.session_id} "
            f"({counted(self.step_count, 'step')}, {counted(self.source_count, 'source')})"
        )
