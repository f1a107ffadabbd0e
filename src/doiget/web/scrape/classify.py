"""What kind of source a page is, how authoritative that kind is, and its subject area.

Source type, first match wins:

1. scholarly signals - a ``citation_journal_title``, ``citation_conference_title`` or
   ``citation_doi`` tag, or a JSON-LD ``ScholarlyArticle`` - make it ``peer_reviewed``,
   except on preprint servers (listed in the data file), where they prove no review;
2. the host lists of ``doiget/web/data/hosts.json`` (a government host stays
   ``government`` even when its page calls itself a ``NewsArticle``);
3. the page's JSON-LD ``@type`` (``NewsArticle``, ``BlogPosting``,
   ``DiscussionForumPosting``, ...);
4. the host's first label (``docs.``, ``blog.``) or the path's first segment
   (``/docs/``, ``/blog/``);
5. ``unknown``.

Authority tier, a simple banding of the source type: ``peer_reviewed``,
``government`` and ``official_docs`` are ``high``; ``news_publication`` and ``wiki``
``medium``; ``blog``, ``forum``, ``social_media`` and ``unknown`` ``low``.

Domain category: the data file's host lists (medical, legal, financial, academic,
technical, in that order), else the JSON-LD type (``Medical...``, ``Legislation``,
``TechArticle``, ...), else what the source type implies (peer-reviewed -> academic,
official docs -> technical), else keywords in the host's labels, else ``general``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from doiget.net.allowlist import host_matches, normalise_host

if TYPE_CHECKING:
    from doiget.web.scrape.html import StructuredData

_SCHOLARLY_TAGS: Final = ("citation_journal_title", "citation_conference_title", "citation_doi")
# JSON-LD types by the source type they show, strongest claim first.
_JSON_LD_SOURCE_TYPES: Final = (
    ("peer_reviewed", frozenset({"ScholarlyArticle", "MedicalScholarlyArticle"})),
    (
        "news_publication",
        frozenset(
            {
                "NewsArticle",
                "ReportageNewsArticle",
                "AnalysisNewsArticle",
                "OpinionNewsArticle",
                "BackgroundNewsArticle",
                "ReviewNewsArticle",
                "AskPublicNewsArticle",
                "LiveBlogPosting",
            }
        ),
    ),
    ("forum", frozenset({"DiscussionForumPosting", "QAPage"})),
    ("social_media", frozenset({"SocialMediaPosting"})),
    ("blog", frozenset({"BlogPosting", "Blog"})),
    ("official_docs", frozenset({"APIReference"})),
)
_JSON_LD_CATEGORIES: Final = (
    ("medical", frozenset({"MedicalScholarlyArticle", "MedicalWebPage", "MedicalCondition"})),
    ("legal", frozenset({"Legislation", "LegislationObject"})),
    ("academic", frozenset({"ScholarlyArticle", "Thesis"})),
    ("technical", frozenset({"TechArticle", "APIReference", "SoftwareSourceCode"})),
)
_TIERS: Final = {
    "peer_reviewed": "high",
    "government": "high",
    "official_docs": "high",
    "news_publication": "medium",
    "wiki": "medium",
}
_IMPLIED_CATEGORY: Final = {"peer_reviewed": "academic", "official_docs": "technical"}


@dataclass(frozen=True)
class Classification:
    """The three judgements reported with a scraped page."""

    source_type: str
    authority_tier: str
    domain_category: str


# Named lists in file order: (name, entries).
_Groups = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class _Hosts:
    """The contents of ``hosts.json``."""

    preprints: tuple[str, ...]
    source_types: _Groups
    prefixes: _Groups
    path_segments: _Groups
    categories: _Groups
    keywords: _Groups


def _groups(raw: dict[str, list[str]]) -> _Groups:
    return tuple((name, tuple(entry.lower() for entry in entries)) for name, entries in raw.items())


@cache
def _hosts() -> _Hosts:
    """The host lists, read once from the package data."""
    text = (resources.files("doiget.web") / "data" / "hosts.json").read_text("utf-8")
    raw = json.loads(text)
    return _Hosts(
        preprints=tuple(raw["preprintHosts"]),
        source_types=_groups(raw["sourceTypes"]),
        prefixes=_groups(raw["hostPrefixes"]),
        path_segments=_groups(raw["pathSegments"]),
        categories=_groups(raw["domainCategories"]),
        keywords=_groups(raw["categoryKeywords"]),
    )


def _listed(host: str, domains: tuple[str, ...]) -> bool:
    """Whether ``host`` is one of ``domains`` or a subdomain of one."""
    return any(host_matches(host, "*." + domain) for domain in domains)


def _first_group(groups: _Groups, hit: Callable[[tuple[str, ...]], bool]) -> str | None:
    """The name of the first group whose entries ``hit`` accepts."""
    return next((name for name, entries in groups if hit(entries)), None)


def _json_ld_types(structured: StructuredData | None) -> set[str]:
    """The ``@type`` names of the page's top-level JSON-LD entities (and ``@graph``)."""

    def entities(items: list[Any]) -> Iterator[dict[str, Any]]:
        for item in items:
            if isinstance(item, dict):
                yield item
                graph = item.get("@graph")
                if isinstance(graph, list):
                    yield from (member for member in graph if isinstance(member, dict))

    types: set[str] = set()
    for entity in entities(structured.json_ld if structured is not None else []):
        value = entity.get("@type")
        for name in value if isinstance(value, list) else [value]:
            if isinstance(name, str):
                # "schema:NewsArticle" and "https://schema.org/NewsArticle" too.
                types.add(name.rsplit("/", 1)[-1].rsplit(":", 1)[-1])
    return types


def _source_type(host: str, path: str, structured: StructuredData | None) -> str:
    hosts = _hosts()
    types = _json_ld_types(structured)
    citation = structured.citation if structured is not None else {}
    preprint = _listed(host, hosts.preprints)
    scholarly = any(citation.get(tag) for tag in _SCHOLARLY_TAGS) or bool(
        types & _JSON_LD_SOURCE_TYPES[0][1]
    )
    if scholarly and not preprint:
        return "peer_reviewed"
    by_host = _first_group(hosts.source_types, lambda domains: _listed(host, domains))
    if by_host is not None:
        return by_host
    for name, names in _JSON_LD_SOURCE_TYPES[1:]:
        if types & names:
            return name
    by_prefix = _first_group(hosts.prefixes, lambda prefixes: host.startswith(prefixes))
    if by_prefix is not None:
        return by_prefix
    segment = path.strip("/").split("/", 1)[0].lower()
    by_path = _first_group(hosts.path_segments, lambda segments: segment in segments)
    return by_path or "unknown"


def _domain_category(host: str, structured: StructuredData | None, source_type: str) -> str:
    hosts = _hosts()
    by_host = _first_group(hosts.categories, lambda domains: _listed(host, domains))
    if by_host is not None:
        return by_host
    types = _json_ld_types(structured)
    for name, names in _JSON_LD_CATEGORIES:
        if types & names:
            return name
    if source_type in _IMPLIED_CATEGORY:
        return _IMPLIED_CATEGORY[source_type]
    labels = host.replace("-", ".").split(".")
    by_keyword = _first_group(
        hosts.keywords,
        lambda words: any(label.startswith(word) for label in labels for word in words),
    )
    return by_keyword or "general"


def classify(url: str, structured: StructuredData | None) -> Classification:
    """The source type, authority tier and domain category of the page at ``url``."""
    parts = urlsplit(url)
    host = normalise_host(parts.hostname or "")
    source_type = _source_type(host, parts.path, structured)
    return Classification(
        source_type=source_type,
        authority_tier=_TIERS.get(source_type, "low"),
        domain_category=_domain_category(host, structured, source_type),
    )
