"""The input contracts of the web tools (spec/web-research-tools.md).

They serve three readers: the MCP face (inputSchema), the CLI (the same bounds) and
the cache (every property except ``sessionId`` is part of a tool's cache key, so a
parameter added here is keyed without anyone remembering to).
"""

from __future__ import annotations

from typing import Any, Final

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
