"""The inputs of the web tools: one model per tool, both its JSON Schema and its parser.

Field names are Python's; the names on the wire are the aliases (``sessionId``,
``searchStep``...), the bounds and defaults are the tool's limits. A bound a schema
states as a pattern also carries a plain-words message, so a caller is told what to
send rather than shown a regular expression. Every field except ``sessionId`` is
part of a cached tool's cache key.
"""

from collections.abc import Sequence
from typing import Annotated, Final, Literal, get_args

from pydantic import AfterValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from doiget.contract import Hint, Request, SessionId
from doiget.upstreams import Role, by_preference
from doiget.web.providers import PROVIDER_NAMES

MAX_SCRAPE_BYTES: Final = 5_000_000
DEFAULT_SCRAPE_BYTES: Final = 50_000
PREVIEW_BYTES: Final = 5_000

# A host name: labels of letters, digits and hyphens joined by dots, so nothing else
# (a space, a colon, a search operator) can ride along in a site: filter.
DOMAIN_PATTERN: Final = r"^([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+$"
DOMAIN_MAX: Final = 253
SESSION_ID_PATTERN: Final = r"^[A-Za-z0-9_-]+$"
BRANCH_PATTERN: Final = "^[A-Za-z0-9_-]{1,40}$"
# CPC section+class, optional subclass, optional main group and subgroup.
CPC_PATTERN: Final = r"^[A-HYa-hy][0-9]{2}([A-Za-z]( ?[0-9]{1,4}(/[0-9]{1,6})?)?)?$"

AcademicProvider = Literal["openalex", "crossref", "semantic_scholar", "pubmed", "arxiv"]
ACADEMIC_PROVIDERS: Final = get_args(AcademicProvider)
AcademicSource = Literal["all", "arxiv", "pubmed", "openalex", "crossref", "semantic_scholar"]
# Tried in this order when no provider is pinned: Lens first, as it honours every
# filter natively (claims text, filing years); OPS reaches titles and abstracts only.
# Every patent provider, in the order they are tried (declared preference).
PATENT_PROVIDERS: Final = tuple(u.name for u in by_preference(Role.PATENT_SEARCH))
SearchType = Literal["prior_art", "specific", "landscape"]
SEARCH_TYPES: Final = get_args(SearchType)
PatentOffice = Literal["all", "US", "EP", "WO", "JP", "CN", "KR"]
PATENT_OFFICES: Final = get_args(PatentOffice)
ExportFormat = Literal["markdown", "json", "bibtex", "csl-json", "ris"]


def _member(choices: Sequence[str]) -> AfterValidator:
    """Refuse a value not in ``choices`` (a list a registry may extend at run time)."""

    def check(value: str) -> str:
        if value not in choices:
            expected = " or ".join(repr(choice) for choice in choices)
            raise PydanticCustomError("enum", "not one of the choices", {"expected": expected})
        return value

    return AfterValidator(check)


Query = Annotated[str, Field(min_length=1, max_length=500)]
Claim = Annotated[str, Field(min_length=1, max_length=500)]
Year = Annotated[int, Field(ge=1000, le=2100)]
PatentYear = Annotated[int, Field(ge=1790, le=2100)]
SearchProvider = Annotated[
    str,
    _member(PROVIDER_NAMES),
    WithJsonSchema({"type": "string", "enum": list(PROVIDER_NAMES)}),
]

PatentProvider = Annotated[
    str,
    _member(PATENT_PROVIDERS),
    WithJsonSchema({"type": "string", "enum": list(PATENT_PROVIDERS)}),
]


class WebSearchRequest(Request):
    """web_search."""

    query: Query
    num_results: int = Field(default=5, ge=1, le=10)
    time_range: Literal["day", "week", "month", "year"] | None = None
    safe: Literal["off", "medium", "high"] = "medium"
    language: Annotated[
        str | None,
        Field(pattern="^[a-z]{2}$"),
        Hint("must be a two-letter ISO 639-1 code in lower case, e.g. en"),
    ] = None
    site: Annotated[
        str | None,
        Field(max_length=DOMAIN_MAX, pattern=DOMAIN_PATTERN),
        Hint("must be a bare domain name such as nature.com (no scheme or path)"),
    ] = None
    exact_terms: str | None = Field(default=None, min_length=1, max_length=200)
    exclude_terms: str | None = Field(default=None, min_length=1, max_length=200)
    country: Annotated[
        str | None,
        Field(pattern="^[A-Za-z]{2}$"),
        Hint("must be a two-letter ISO 3166-1 country code, e.g. us"),
    ] = None
    lens: Annotated[
        str | None,
        Field(
            pattern="^[A-Za-z0-9_-]{1,40}$",
            description="e.g. academic, news, legal",
        ),
        Hint("must be a lens name (letters, digits, _ and -, at most 40)"),
    ] = None
    provider: SearchProvider | None = None
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    claim: Claim | None = None


class ScrapePageRequest(Request):
    """scrape_page."""

    url: Annotated[
        str,
        Field(min_length=8, max_length=2048, pattern="^[Hh][Tt][Tt][Pp][Ss]?://"),
        Hint("must be an http:// or https:// URL"),
    ]
    mode: Literal["full", "preview", "raw"] = Field(
        "full", description="full: clean markdown; preview: first 5000 bytes; raw: as sent."
    )
    max_length: int = Field(
        DEFAULT_SCRAPE_BYTES, ge=1, le=MAX_SCRAPE_BYTES, description="Byte cap on content."
    )
    session_id: SessionId | None = Field(default=None, alias="sessionId")


class SearchAndScrapeRequest(Request):
    """search_and_scrape."""

    query: Query
    num_results: int = Field(default=3, ge=1, le=10)
    include_sources: bool = Field(default=True, description="false: only combinedContent.")
    deduplicate: bool = True
    max_length_per_source: int = Field(default=DEFAULT_SCRAPE_BYTES, ge=100, le=MAX_SCRAPE_BYTES)
    total_max_length: int = Field(default=300_000, ge=100, le=MAX_SCRAPE_BYTES)
    filter_by_query: bool | None = Field(default=None, description="Default: on with claim.")
    provider: SearchProvider | None = None
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    claim: Claim | None = None


class AcademicSearchRequest(Request):
    """academic_search."""

    query: Query
    num_results: int = Field(default=5, ge=1, le=10)
    year_from: Year | None = None
    year_to: Year | None = None
    source: AcademicSource = Field("all", description="Only papers indexed there.")
    open_access: bool = False
    pdf_only: bool = False
    sort_by: Literal["relevance", "date"] = "relevance"
    provider: Literal["openalex", "crossref", "semantic_scholar", "pubmed", "arxiv"] | None = Field(
        default=None, description="This index alone, no fallback."
    )
    session_id: SessionId | None = Field(default=None, alias="sessionId")


class PatentSearchRequest(Request):
    """patent_search."""

    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="Or a number: US10123456B2.",
    )
    num_results: int = Field(default=5, ge=1, le=10)
    search_type: SearchType = "prior_art"
    patent_office: PatentOffice = "all"
    assignee: str | None = Field(default=None, min_length=1, max_length=200)
    inventor: str | None = Field(default=None, min_length=1, max_length=200)
    cpc_code: Annotated[
        str | None,
        Field(pattern=CPC_PATTERN, description="e.g. H01L21/02"),
        Hint("must be a CPC class, subclass or group such as G06F or H01L21/02"),
    ] = None
    year_from: PatentYear | None = None
    year_to: PatentYear | None = None
    provider: PatentProvider | None = None
    session_id: SessionId | None = Field(default=None, alias="sessionId")


StepNumber = Annotated[int, Field(ge=1)]


class ResearchStepRequest(Request):
    """sequential_search."""

    search_step: str = Field(
        alias="searchStep",
        min_length=1,
        max_length=2000,
    )
    step_number: StepNumber = Field(alias="stepNumber")
    next_step_needed: bool = Field(alias="nextStepNeeded")
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    research_goal: str | None = Field(
        default=None,
        alias="researchGoal",
        min_length=1,
        max_length=1000,
    )
    reasoning: str | None = Field(default=None, max_length=4000)
    confidence: float | None = Field(default=None, ge=0, le=1)
    rejected_approaches: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, alias="rejectedApproaches", max_length=20
    )
    is_revision: bool = Field(False, alias="isRevision")
    revises_step: StepNumber | None = Field(default=None, alias="revisesStep")
    branch_from_step: StepNumber | None = Field(default=None, alias="branchFromStep")
    branch_id: Annotated[
        str | None,
        Field(pattern=BRANCH_PATTERN),
        Hint("may use letters, digits, _ and - (at most 40)"),
    ] = Field(default=None, alias="branchId")
    knowledge_gap: str | None = Field(
        default=None, alias="knowledgeGap", min_length=1, max_length=1000
    )


class ResearchSessionRequest(Request):
    """get_research_session."""

    session_id: SessionId = Field(alias="sessionId")
    step_id: StepNumber | None = Field(
        default=None, alias="stepId", description="This step in full instead of the summary."
    )


class ResearchExportRequest(Request):
    """research_export."""

    session_id: SessionId = Field(alias="sessionId")
    format: ExportFormat = Field(
        "markdown", description="A report, the session, or a bibliography of its sources."
    )
    verify_links: bool = Field(default=False, description="Check each source URL is live (slower).")


CachedRequest = WebSearchRequest | ScrapePageRequest | AcademicSearchRequest | PatentSearchRequest
