"""HTML pages to markdown, metadata and structured data (no network)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doiget.web.scrape.html import (
    MAX_JSON_LD_BLOCKS,
    MAX_JSON_LD_BYTES,
    MAX_META_VALUES,
    HtmlExtraction,
    StructuredData,
    extract_html,
)

WEB = Path(__file__).parents[1] / "fixtures" / "web"
ARTICLE_URL = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0299999"
NEWS_URL = "https://www.coastalcourier.example/news/2025/06/harbour-ferry-vote"


@pytest.fixture(scope="module")
def article() -> HtmlExtraction:
    return extract_html((WEB / "article.html").read_text("utf-8"), ARTICLE_URL)


@pytest.fixture(scope="module")
def news() -> HtmlExtraction:
    return extract_html((WEB / "news.html").read_text("utf-8"), NEWS_URL)


def _page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>T</title>{head}</head><body>{body}</body></html>"


def test_article_main_text_is_markdown_without_boilerplate(article: HtmlExtraction) -> None:
    text = article.markdown
    assert article.quality == "complete" and article.extracted_by == "html"
    assert "## Materials and methods" in text and "## Discussion" in text
    assert "towed behind a snowmobile" in text
    for boilerplate in ("Sign in", "Privacy Policy", "Article metrics", "nonprofit 501(c)(3)"):
        assert boilerplate not in text
    assert "gtag" not in text and "font-family" not in text


def test_article_table_is_a_pipe_table_with_its_caption_above(article: HtmlExtraction) -> None:
    lines = article.markdown.split("\n")
    header = lines.index("| Winter | Lakes surveyed | Radar profile (km) | Drill holes |")
    assert lines[header - 2] == "Table 1. Survey summary per winter."
    assert lines[header + 1] == "|---|---|---|---|"
    assert lines[header + 2] == "| 2020\u20132021 | 12 | 148.2 | 71 |"
    table = [line for line in lines if line.startswith("|")]
    assert sum(1 for line in table if line.startswith("|---")) == 1


def test_article_markdown_has_no_invisible_characters(article: HtmlExtraction) -> None:
    assert "\u200b" not in article.markdown  # the fixture has one in "2.1&#8203; cm"
    assert all(ch in "\n\t" or ch.isprintable() for ch in article.markdown)


def test_article_metadata(article: HtmlExtraction) -> None:
    assert article.title == (
        "Seasonal variation of lake ice thickness measured by ground-penetrating radar"
    )
    assert article.author is not None and "Lindqvist" in article.author
    assert "Okafor" in article.author
    assert article.date == "2024-03-14"
    assert article.site
    assert article.description and article.description.startswith("We measured lake ice")


def test_article_structured_data(article: HtmlExtraction) -> None:
    data = article.structured
    assert data is not None
    # The second JSON-LD block is broken JSON and is skipped.
    assert [item["@type"] for item in data.json_ld] == ["ScholarlyArticle"]
    assert data.open_graph["og:title"].startswith("Seasonal variation")
    assert data.open_graph["article:published_time"] == "2024-03-14T14:00:00Z"
    assert "twitter:card" not in data.open_graph
    assert data.citation["citation_author"] == ["Lindqvist, Maja", "Okafor, Daniel E."]
    assert data.citation["citation_doi"] == "10.1371/journal.pone.0299999"
    assert data.citation["citation_journal_title"] == "PLOS ONE"
    assert data.citation["dc.identifier"] == "doi:10.1371/journal.pone.0299999"
    assert set(data.to_dict()) == {"jsonLd", "openGraph", "citation"}
    json.dumps(data.to_dict())  # the wire form is plain JSON


def test_news_page(news: HtmlExtraction) -> None:
    assert news.quality == "complete"
    assert news.markdown.startswith("# Harbour town votes to keep its last ferry running")
    assert "A public consultation on the timetable will open in July." in news.markdown
    for boilerplate in ("cookies", "Most read", "About time!", "All rights reserved"):
        assert boilerplate not in news.markdown
    assert (news.author, news.date, news.site) == (
        "Priya Raman",
        "2025-06-10",
        "The Coastal Courier",
    )


def test_news_structured_data(news: HtmlExtraction) -> None:
    data = news.structured
    assert data is not None
    # The @graph block parses; the block holding NaN is not JSON and is skipped.
    assert len(data.json_ld) == 1
    assert [item["@type"] for item in data.json_ld[0]["@graph"]] == ["NewsArticle", "WebSite"]
    assert data.open_graph["og:image"].endswith("/ferry.jpg")  # the first of two
    assert data.open_graph["article:published_time"] == "2025-06-10T18:25:00+01:00"  # name=
    assert data.open_graph["article:section"] == "Local"
    assert data.citation == {}
    assert set(data.to_dict()) == {"jsonLd", "openGraph"}


def test_thin_page_falls_back_to_plain_text() -> None:
    html = _page(
        "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        "<script>var tracking = 1;</script><style>p { color: red }</style>"
        "<main><h2>Opening hours</h2><p>Open daily\n   from nine.</p>"
        "<ul><li>Mon</li><li>Tue</li></ul></main>"
        "<aside>Sponsored</aside><footer>Copyright</footer>"
    )
    page = extract_html(html, "https://shop.example/hours")
    assert page.quality == "partial"
    assert page.markdown == "## Opening hours\n\nOpen daily from nine.\n\n- Mon\n\n- Tue"


def test_page_without_structured_data_has_none() -> None:
    page = extract_html(_page("<p>" + "Plain words in a paragraph. " * 10 + "</p>"), "https://a.b/")
    assert page.structured is None
    assert "Plain words in a paragraph." in page.markdown


@pytest.mark.parametrize("html", ["", "   ", "\x00\x01binary", "<html></html>"])
def test_empty_or_junk_input_never_fails(html: str) -> None:
    page = extract_html(html, "https://a.b/")
    assert page.quality == "partial"
    assert page.markdown.strip() == page.markdown


def test_markdown_control_and_zero_width_characters_are_stripped() -> None:
    paragraph = "Visible\u200b text\u2060 with\x07 hidden\ufeff characters. " * 6
    page = extract_html(_page(f"<article><p>{paragraph}</p></article>"), "https://a.b/")
    assert "Visible text with hidden characters." in page.markdown
    assert not any(ch in page.markdown for ch in "\u200b\u2060\x07\ufeff")


def test_json_ld_is_bounded_in_blocks_and_bytes() -> None:
    many = "".join(
        f'<script type="application/ld+json">{{"@type": "Thing", "n": {n}}}</script>'
        for n in range(MAX_JSON_LD_BLOCKS + 5)
    )
    page = extract_html(_page("<p>x</p>", many), "https://a.b/")
    assert page.structured is not None
    assert [item["n"] for item in page.structured.json_ld] == list(range(MAX_JSON_LD_BLOCKS))

    huge = json.dumps({"@type": "Thing", "blob": "x" * MAX_JSON_LD_BYTES})
    small = '{"@type": "Person", "name": "Ada"}'
    head = (
        f'<script type="application/ld+json">{huge}</script>'
        f'<script type="application/ld+json">{small}</script>'
    )
    page = extract_html(_page("<p>x</p>", head), "https://a.b/")
    assert page.structured is not None
    assert page.structured.json_ld == [{"@type": "Person", "name": "Ada"}]


def test_json_ld_array_and_comment_wrapped_blocks() -> None:
    head = (
        '<script type="application/ld+json">[{"@type": "A"}, {"@type": "B"}]</script>'
        '<script type="application/ld+json"><!-- {"@type": "C"} --></script>'
        '<script type="application/ld+json">{"@type": "D", "deep": '
        + "[" * 5000
        + "]" * 5000
        + "}</script>"
    )
    page = extract_html(_page("<p>x</p>", head), "https://a.b/")
    assert page.structured is not None
    assert [item["@type"] for item in page.structured.json_ld] == ["A", "B", "C"]


def test_repeated_citation_tags_are_bounded() -> None:
    head = (
        "".join(
            f'<meta name="citation_reference" content="ref {n}">'
            for n in range(MAX_META_VALUES + 10)
        )
        + '<meta name="CITATION_TITLE" content="  A   title ">'
    )
    page = extract_html(_page("<p>x</p>", head), "https://a.b/")
    assert page.structured is not None
    references = page.structured.citation["citation_reference"]
    assert isinstance(references, list) and len(references) == MAX_META_VALUES
    assert page.structured.citation["citation_title"] == "A title"


def test_structured_data_to_dict_omits_empty_parts() -> None:
    assert StructuredData().to_dict() == {}
    assert StructuredData(citation={"citation_doi": "10.1/x"}).to_dict() == {
        "citation": {"citation_doi": "10.1/x"}
    }


def test_importing_the_scrape_modules_loads_no_heavy_library() -> None:
    modules = ", ".join(
        f"doiget.web.scrape.{name}"
        for name in ("html", "documents", "citation", "classify", "doi", "measure")
    )
    code = (
        f"import sys, {modules}\n"
        "heavy = [m for m in ('trafilatura', 'pypdfium2', 'docx', 'pptx') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
