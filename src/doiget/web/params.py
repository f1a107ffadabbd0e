"""The input contracts of the web tools (spec/web-research-tools.md).

They serve three readers: the MCP face (inputSchema), the CLI (the same bounds) and
the cache (every property except ``sessionId`` is part of a tool's cache key, so a
parameter added here is keyed without anyone remembering to).
"""

from __future__ import annotations

from typing import Any, Final

from doiget.upstreams import Role, by_preference
from doiget.web.providers import PROVIDER_NAMES

MAX_SCRAPE_BYTES: Final = 5_000_000
DEFAULT_SCRAPE_BYTES: Final = 50_000
PREVIEW_BYTES: Final = 5_000

# A host name: dot-separated labels of letters, digits and inner hyphens.
_LABEL: Final = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
DOMAIN_PATTERN: Final = rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$"

SESSION_ID: Final = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "pattern": r"^[A-Za-z0-9_-]+$",
    "description": "Link this call to a sequential_search session (does not change results).",
}

WEB_SEARCH: Final[dict[str, Any]] = {
    "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Search terms."},
    "num_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
    "time_range": {"type": "string", "enum": ["day", "week", "month", "year"]},
    "safe": {"type": "string", "enum": ["off", "medium", "high"], "default": "medium"},
    "language": {
        "type": "string",
        "pattern": "^[a-z]{2}$",
        "description": "ISO 639-1 code, e.g. 'en'.",
    },
    "site": {
        "type": "string",
        "pattern": DOMAIN_PATTERN,
        "description": "Restrict to this domain (cannot be combined with lens).",
    },
    "exact_terms": {"type": "string", "minLength": 1, "maxLength": 200},
    "exclude_terms": {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "description": "Space-separated words results must not contain.",
    },
    "country": {
        "type": "string",
        "pattern": "^[A-Za-z]{2}$",
        "description": "ISO 3166-1 alpha-2 code, e.g. 'us'.",
    },
    "lens": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_-]{1,40}$",
        "description": "Domain lens: academic, biomed, government, legal, medical, news, "
        "programming, science, or a user lens.",
    },
    "provider": {"type": "string", "enum": list(PROVIDER_NAMES)},
    "sessionId": SESSION_ID,
    "claim": {
        "type": "string",
        "minLength": 1,
        "maxLength": 500,
        "description": "A claim to triage results against; each result gains claimSignal.",
    },
}

SCRAPE_PAGE: Final[dict[str, Any]] = {
    "url": {
        "type": "string",
        "minLength": 8,
        "maxLength": 2048,
        "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://",
        "description": "The http(s) URL to read.",
    },
    "mode": {"type": "string", "enum": ["full", "preview", "raw"], "default": "full"},
    "max_length": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_SCRAPE_BYTES,
        "default": DEFAULT_SCRAPE_BYTES,
        "description": "Byte cap on content (preview: always 5000; raw: cap on bytes read).",
    },
    "sessionId": SESSION_ID,
}

SEARCH_AND_SCRAPE: Final[dict[str, Any]] = {
    "query": WEB_SEARCH["query"],
    "num_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
    "include_sources": {
        "type": "boolean",
        "default": True,
        "description": "Return each source's own content (false: only combinedContent).",
    },
    "deduplicate": {
        "type": "boolean",
        "default": True,
        "description": "Drop paragraphs already seen in a higher-ranked source.",
    },
    "max_length_per_source": {
        "type": "integer",
        "minimum": 100,
        "maximum": MAX_SCRAPE_BYTES,
        "default": DEFAULT_SCRAPE_BYTES,
    },
    "total_max_length": {
        "type": "integer",
        "minimum": 100,
        "maximum": MAX_SCRAPE_BYTES,
        "default": 300_000,
    },
    "filter_by_query": {
        "type": "boolean",
        "description": "Drop sources that barely mention the query (default: on when claim "
        "is set, else off).",
    },
    "provider": WEB_SEARCH["provider"],
    "sessionId": SESSION_ID,
    "claim": WEB_SEARCH["claim"],
}

ACADEMIC_PROVIDERS: Final = ("openalex", "crossref", "semantic_scholar", "pubmed", "arxiv")
ACADEMIC_SOURCES: Final = ("all", "arxiv", "pubmed", "openalex", "crossref", "semantic_scholar")
ACADEMIC_SEARCH: Final[dict[str, Any]] = {
    "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Search terms."},
    "num_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
    "year_from": {
        "type": "integer",
        "minimum": 1000,
        "maximum": 2100,
        "description": "Earliest publication year (inclusive).",
    },
    "year_to": {
        "type": "integer",
        "minimum": 1000,
        "maximum": 2100,
        "description": "Latest publication year (inclusive).",
    },
    "source": {
        "type": "string",
        "enum": list(ACADEMIC_SOURCES),
        "default": "all",
        "description": "Whose papers: all, or only those indexed in arxiv, pubmed, openalex, "
        "crossref or semantic_scholar (OpenAlex answers for arxiv, pubmed and crossref "
        "through its indexed_in filter, then the index itself).",
    },
    "open_access": {
        "type": "boolean",
        "default": False,
        "description": "Only papers known to be free to read.",
    },
    "pdf_only": {
        "type": "boolean",
        "default": False,
        "description": "Only papers with a direct PDF link.",
    },
    "sort_by": {
        "type": "string",
        "enum": ["relevance", "date"],
        "default": "relevance",
        "description": "date: newest first.",
    },
    "provider": {
        "type": "string",
        "enum": list(ACADEMIC_PROVIDERS),
        "description": "Ask this index alone (no fallback to another).",
    },
    "sessionId": SESSION_ID,
}

# Tried in the order the patent providers declare (their preference) when none is pinned.
PATENT_PROVIDERS: Final = tuple(u.name for u in by_preference(Role.PATENT_SEARCH))
SEARCH_TYPES: Final = ("prior_art", "specific", "landscape")
PATENT_OFFICES: Final = ("all", "US", "EP", "WO", "JP", "CN", "KR")
# CPC section+class, optional subclass, optional main group and subgroup.
CPC_PATTERN: Final = r"^[A-HYa-hy][0-9]{2}([A-Za-z]( ?[0-9]{1,4}(/[0-9]{1,6})?)?)?$"
_PATENT_YEAR: Final = {"type": "integer", "minimum": 1790, "maximum": 2100}
PATENT_SEARCH: Final[dict[str, Any]] = {
    "query": {
        "type": "string",
        "minLength": 1,
        "maxLength": 500,
        "description": "Patent terms, an exact title, or a patent number (e.g. US10123456B2). "
        "Required unless assignee or inventor is given.",
    },
    "num_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
    "search_type": {
        "type": "string",
        "enum": list(SEARCH_TYPES),
        "default": "prior_art",
        "description": "prior_art: match the terms in titles, abstracts and claims; specific: "
        "the query is a patent number or an exact title; landscape: a wider pool clustered "
        "by assignee.",
    },
    "patent_office": {"type": "string", "enum": list(PATENT_OFFICES), "default": "all"},
    "assignee": {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "description": "Applicant or owner; suffixes such as Inc, LLC or Ltd are ignored.",
    },
    "inventor": {"type": "string", "minLength": 1, "maxLength": 200},
    "cpc_code": {
        "type": "string",
        "pattern": CPC_PATTERN,
        "description": "CPC class, subclass or group, e.g. G06F or H01L21/02.",
    },
    "year_from": {**_PATENT_YEAR, "description": "Only patents filed in or after this year."},
    "year_to": {**_PATENT_YEAR, "description": "Only patents filed in or before this year."},
    "provider": {"type": "string", "enum": list(PATENT_PROVIDERS)},
    "sessionId": SESSION_ID,
}

BRANCH_PATTERN: Final = "^[A-Za-z0-9_-]{1,40}$"

_SESSION_ID_STEP: Final = {
    **SESSION_ID,
    "description": "The sessionId returned by step 1; required for every later step.",
}
_SESSION_ID_READ: Final = {**SESSION_ID, "description": "The research session to read."}

SEQUENTIAL_SEARCH_INPUTS: Final[dict[str, Any]] = {
    "searchStep": {
        "type": "string",
        "minLength": 1,
        "maxLength": 2000,
        "description": "What this step searched for or concluded.",
    },
    "stepNumber": {"type": "integer", "minimum": 1, "description": "Starts at 1."},
    "nextStepNeeded": {"type": "boolean", "description": "Whether more steps follow."},
    "sessionId": _SESSION_ID_STEP,
    "researchGoal": {
        "type": "string",
        "minLength": 1,
        "maxLength": 1000,
        "description": "The research objective (set on step 1; a later value replaces it).",
    },
    "reasoning": {"type": "string", "maxLength": 4000, "description": "Why this direction."},
    "confidence": {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "Confidence in this step, 0 to 1.",
    },
    "rejectedApproaches": {
        "type": "array",
        "maxItems": 20,
        "items": {"type": "string", "minLength": 1, "maxLength": 500},
        "description": "Approaches considered and rejected.",
    },
    "isRevision": {
        "type": "boolean",
        "default": False,
        "description": "This step revises an earlier one (name it in revisesStep).",
    },
    "revisesStep": {"type": "integer", "minimum": 1, "description": "The step revised."},
    "branchFromStep": {
        "type": "integer",
        "minimum": 1,
        "description": "Start a branch from this step.",
    },
    "branchId": {
        "type": "string",
        "pattern": BRANCH_PATTERN,
        "description": "The branch this step belongs to (default for a new branch: "
        "branch-<stepNumber>).",
    },
    "knowledgeGap": {
        "type": "string",
        "minLength": 1,
        "maxLength": 1000,
        "description": "A gap this step identified.",
    },
}
SEQUENTIAL_SEARCH_REQUIRED: Final = ("searchStep", "stepNumber", "nextStepNeeded")

GET_SESSION_INPUTS: Final[dict[str, Any]] = {
    "sessionId": _SESSION_ID_READ,
    "stepId": {
        "type": "integer",
        "minimum": 1,
        "description": "Return this step in full instead of the session summary.",
    },
}
GET_SESSION_REQUIRED: Final = ("sessionId",)

EXPORT_INPUTS: Final[dict[str, Any]] = {
    "sessionId": _SESSION_ID_READ,
    "format": {
        "type": "string",
        "enum": ["markdown", "json", "bibtex", "csl-json", "ris"],
        "default": "markdown",
        "description": "markdown report, json session, or a bibliography of the sources.",
    },
    "verify_links": {
        "type": "boolean",
        "default": False,
        "description": "Check each source URL is live (adds linkStatus; slower).",
    },
}
EXPORT_REQUIRED: Final = ("sessionId",)
