"""Source type, authority tier and domain category of scraped pages."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from doiget.web.scrape.classify import Classification, classify
from doiget.web.scrape.html import StructuredData, extract_html

WEB = Path(__file__).parents[1] / "fixtures" / "web"


def _json_ld(*types: str) -> StructuredData:
    return StructuredData(json_ld=[{"@context": "https://schema.org", "@type": t} for t in types])


@pytest.mark.parametrize(
    ("url", "source_type", "tier", "category"),
    [
        ("https://www.cdc.gov/flu/index.html", "government", "high", "medical"),
        ("https://www.gov.uk/guidance/x", "government", "high", "general"),
        ("https://eur-lex.europa.eu/eli/reg/2016/679/oj", "government", "high", "legal"),
        ("https://www.sec.gov/edgar/search", "government", "high", "financial"),
        ("https://docs.python.org/3/library/asyncio.html", "official_docs", "high", "technical"),
        ("https://requests.readthedocs.io/en/latest/", "official_docs", "high", "technical"),
        ("https://developer.apple.com/documentation/swift", "official_docs", "high", "technical"),
        ("https://example.com/docs/getting-started", "official_docs", "high", "technical"),
        ("https://en.wikipedia.org/wiki/Lake_ice", "wiki", "medium", "general"),
        ("https://old.reddit.com/r/python/comments/1", "forum", "low", "general"),
        ("https://news.ycombinator.com/item?id=1", "forum", "low", "technical"),
        ("https://stackoverflow.com/questions/1", "forum", "low", "technical"),
        ("https://bsky.app/profile/a.bsky.social", "social_media", "low", "general"),
        ("https://x.com/someone/status/1", "social_media", "low", "general"),
        ("https://www.reuters.com/world/x", "news_publication", "medium", "general"),
        ("https://www.ft.com/content/x", "news_publication", "medium", "financial"),
        ("https://someone.substack.com/p/post", "blog", "low", "general"),
        ("https://medium.com/@someone/post", "blog", "low", "general"),
        ("https://blog.example.com/post", "blog", "low", "general"),
        ("https://example.com/blog/2024/post", "blog", "low", "general"),
        ("https://www.nejm.org/doi/full/10.1056/NEJMoa1", "peer_reviewed", "high", "medical"),
        ("https://arxiv.org/abs/2401.00001", "unknown", "low", "academic"),
        ("https://github.com/owner/repo", "unknown", "low", "technical"),
        ("https://docs.google.com/document/d/1", "unknown", "low", "general"),
        ("https://www.law.cornell.edu/uscode/text/17/107", "unknown", "low", "legal"),
        ("https://www.lawfirm-example.com/", "unknown", "low", "legal"),
        ("https://healthsite.example/", "unknown", "low", "medical"),
        ("https://www.example.com/", "unknown", "low", "general"),
        ("not a url", "unknown", "low", "general"),
    ],
)
def test_classify_by_host(url: str, source_type: str, tier: str, category: str) -> None:
    assert classify(url, None) == Classification(source_type, tier, category)


def test_article_fixture_is_peer_reviewed_academic() -> None:
    url = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0299999"
    page = extract_html((WEB / "article.html").read_text("utf-8"), url)
    assert classify(url, page.structured) == Classification("peer_reviewed", "high", "academic")


def test_news_fixture_is_a_news_publication_by_its_json_ld() -> None:
    url = "https://www.coastalcourier.example/news/2025/06/harbour-ferry-vote"
    page = extract_html((WEB / "news.html").read_text("utf-8"), url)
    assert classify(url, page.structured).source_type == "news_publication"
    assert classify(url, None).source_type == "unknown"


@pytest.mark.parametrize(
    ("types", "source_type"),
    [
        (("BlogPosting",), "blog"),
        (("DiscussionForumPosting",), "forum"),
        (("QAPage",), "forum"),
        (("SocialMediaPosting",), "social_media"),
        (("ReportageNewsArticle",), "news_publication"),
        (("APIReference",), "official_docs"),
        (("WebPage", "Organization"), "unknown"),
        # The strongest claim wins.
        (("BlogPosting", "NewsArticle"), "news_publication"),
    ],
)
def test_json_ld_types_on_an_unknown_host(types: tuple[str, ...], source_type: str) -> None:
    assert classify("https://unknown.example/p", _json_ld(*types)).source_type == source_type


def test_json_ld_type_forms_and_graph() -> None:
    graph = StructuredData(
        json_ld=[{"@graph": [{"@type": ["WebPage"]}, {"@type": "http://schema.org/BlogPosting"}]}]
    )
    assert classify("https://unknown.example/p", graph).source_type == "blog"
    prefixed = StructuredData(json_ld=[{"@type": "schema:NewsArticle"}])
    assert classify("https://unknown.example/p", prefixed).source_type == "news_publication"
    # Types of nested entities (a cited article) say nothing about the page.
    nested = StructuredData(
        json_ld=[{"@type": "WebPage", "citation": {"@type": "ScholarlyArticle"}}]
    )
    assert classify("https://unknown.example/p", nested).source_type == "unknown"


def test_listed_hosts_outrank_json_ld() -> None:
    # Medium marks posts as NewsArticle; a government press release may do the same.
    assert classify("https://medium.com/@a/p", _json_ld("NewsArticle")).source_type == "blog"
    assert classify("https://www.nih.gov/news/x", _json_ld("NewsArticle")).source_type == (
        "government"
    )


def test_citation_tags_make_a_page_peer_reviewed_except_on_preprint_servers() -> None:
    tags = StructuredData(citation={"citation_journal_title": "Journal of Lakes"})
    assert classify("https://journal.example/a/1", tags) == Classification(
        "peer_reviewed", "high", "academic"
    )
    doi = StructuredData(citation={"citation_doi": "10.1101/2024.01.01.000001"})
    assert classify("https://www.biorxiv.org/content/x", doi).source_type == "unknown"
    assert classify("https://www.biorxiv.org/content/x", doi).domain_category == "academic"


def test_json_ld_sets_the_category_on_an_unknown_host() -> None:
    assert classify("https://a.example/", _json_ld("MedicalWebPage")).domain_category == "medical"
    assert classify("https://a.example/", _json_ld("Legislation")).domain_category == "legal"
    assert classify("https://a.example/", _json_ld("TechArticle")).domain_category == "technical"


def test_host_data_file_is_well_formed() -> None:
    raw = json.loads((resources.files("doiget.web") / "data" / "hosts.json").read_text("utf-8"))
    kinds = set(raw["sourceTypes"]) | set(raw["hostPrefixes"]) | set(raw["pathSegments"])
    assert kinds <= {
        "peer_reviewed",
        "official_docs",
        "government",
        "news_publication",
        "blog",
        "forum",
        "wiki",
        "social_media",
        "unknown",
    }
    categories = set(raw["domainCategories"]) | set(raw["categoryKeywords"])
    assert categories <= {"academic", "legal", "medical", "financial", "technical"}
    hosts = [host for group in raw["sourceTypes"].values() for host in group]
    hosts += [host for group in raw["domainCategories"].values() for host in group]
    assert all(host == host.lower().strip() and "/" not in host for host in hosts)
