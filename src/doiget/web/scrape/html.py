"""HTML pages as markdown, with their metadata and the structured data they embed.

The main text and the metadata come from trafilatura (imported on first use). When it
finds next to nothing, a plain-text rendering of the page's ``<article>``, ``<main>``
or ``<body>`` stands in and the extraction is reported ``partial``.

Structured data is read from the page itself: JSON-LD blocks, OpenGraph (``og:*``,
``article:*``) meta tags and Highwire ``citation_*`` meta tags (plus the Dublin Core
``dc.identifier``, which often carries a DOI). All three are bounded in size.

Extraction costs time and memory per element, so a page is first counted by a parser
that builds no tree; one over :data:`HTML_MAX_ELEMENTS` is refused (``too_large``)
before any tree is built.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from doiget.jsontext import parse_json
from doiget.web.failure import Kind, web_error
from doiget.web.scrape.limits import EXTRACT_MAX_TEXT_CHARS, HTML_MAX_ELEMENTS
from doiget.web.scrape.measure import clean_text

if TYPE_CHECKING:
    from lxml.html import HtmlElement

# Less main text than this (characters) and trafilatura is taken to have missed the page.
MIN_MAIN_TEXT: Final = 100
MAX_JSON_LD_BLOCKS: Final = 20
MAX_JSON_LD_BYTES: Final = 64 * 1024
# Bounds on meta tags: characters per value, values per repeated citation tag
# (some publishers emit one citation_reference tag per reference).
MAX_META_VALUE: Final = 1000
MAX_META_VALUES: Final = 50

_OPEN_GRAPH_PREFIXES: Final = ("og:", "article:")
_CITATION_PREFIX: Final = "citation_"
_CITATION_EXTRA: Final = frozenset({"dc.identifier", "dcterms.identifier"})
_ISO_DAY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_JSON_WRAPPERS: Final = re.compile(r"^\s*(?:<!--|<!\[CDATA\[)|(?:-->|\]\]>)\s*$")
# Elements that never hold the main text, dropped before the plain-text fallback.
_BOILERPLATE: Final = (
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "footer",
    "aside",
    "form",
    "button",
    "iframe",
    "svg",
)
_BLOCKS: Final = (
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "blockquote",
    "pre",
    "ul",
    "ol",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "figure",
    "figcaption",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
)
_ANY_SPACE: Final = re.compile(r"\s+")
_TABLE_SEPARATOR: Final = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")


@dataclass(frozen=True)
class StructuredData:
    """Machine-readable facts a page embeds about itself.

    ``open_graph`` keys keep their ``og:``/``article:`` prefix and ``citation`` keys their
    ``citation_`` prefix (lower-cased); a repeated citation tag becomes a list.
    """

    json_ld: list[Any] = field(default_factory=list)
    open_graph: dict[str, str] = field(default_factory=dict)
    citation: dict[str, str | list[str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Whether the page embeds none of the three kinds."""
        return not (self.json_ld or self.open_graph or self.citation)

    def to_dict(self) -> dict[str, Any]:
        """``{"jsonLd": [...], "openGraph": {...}, "citation": {...}}``, empty parts left out."""
        out: dict[str, Any] = {}
        if self.json_ld:
            out["jsonLd"] = self.json_ld
        if self.open_graph:
            out["openGraph"] = self.open_graph
        if self.citation:
            out["citation"] = self.citation
        return out


@dataclass(frozen=True)
class HtmlExtraction:
    """An HTML page as markdown plus its metadata.

    ``date`` is ``YYYY-MM-DD`` when known; ``quality`` is ``complete`` when trafilatura
    found the main text, ``partial`` when the plain-text fallback was used.
    """

    markdown: str
    title: str | None
    author: str | None
    date: str | None
    site: str | None
    description: str | None
    structured: StructuredData | None
    quality: str
    extracted_by: str = "html"


# -- structured data -------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    """JSON parse hook: NaN and Infinity are not JSON, so the block is invalid."""
    raise ValueError(f"{name} is not valid JSON")


def _json_ld(tree: HtmlElement) -> list[Any]:
    """The parsed JSON-LD blocks, within the block and byte bounds; broken ones skipped.

    A block holding a JSON array contributes its items.
    """
    found: list[Any] = []
    budget = MAX_JSON_LD_BYTES
    for script in tree.iter("script"):
        if len(found) >= MAX_JSON_LD_BLOCKS:
            break
        if (script.get("type") or "").split(";")[0].strip().lower() != "application/ld+json":
            continue
        source = _JSON_WRAPPERS.sub("", script.text or "").strip()
        size = len(source.encode("utf-8"))
        if not source or size > budget:
            continue
        try:
            value = parse_json(source, parse_constant=_reject_constant)
        except ValueError:
            continue
        budget -= size
        items = value if isinstance(value, list) else [value]
        found.extend(items[: MAX_JSON_LD_BLOCKS - len(found)])
    return found


def _meta_tags(tree: HtmlElement) -> tuple[dict[str, str], dict[str, str | list[str]]]:
    """(OpenGraph tags, citation tags) from the page's ``<meta>`` elements."""
    open_graph: dict[str, str] = {}
    citation: dict[str, list[str]] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        value = " ".join((meta.get("content") or "").split())[:MAX_META_VALUE]
        if not key or not value:
            continue
        if key.startswith(_OPEN_GRAPH_PREFIXES):
            open_graph.setdefault(key, value)  # the first of a repeated tag (og:image)
        elif key.startswith(_CITATION_PREFIX) or key in _CITATION_EXTRA:
            values = citation.setdefault(key, [])
            if len(values) < MAX_META_VALUES:
                values.append(value)
    flat: dict[str, str | list[str]] = {
        key: values[0] if len(values) == 1 else values for key, values in citation.items()
    }
    return open_graph, flat


def structured_data(tree: HtmlElement) -> StructuredData | None:
    """What ``tree`` embeds as JSON-LD, OpenGraph and citation tags; None if nothing."""
    open_graph, citation = _meta_tags(tree)
    found = StructuredData(_json_ld(tree), open_graph, citation)
    return None if found.empty else found


# -- text ------------------------------------------------------------------------------


def _tidy_table(lines: list[str]) -> list[str]:
    """One pipe table with a single header separator.

    trafilatura renders a ``<caption>`` as a one-cell first row and then repeats the
    separator under the real header; the caption becomes a line above the table.
    """
    separators = [number for number, line in enumerate(lines) if _TABLE_SEPARATOR.match(line)]
    if not separators:
        return lines
    first_cells = [cell.strip() for cell in lines[0].strip("|").split("|")]
    if separators[:2] == [1, 3] and sum(1 for cell in first_cells if cell) == 1:
        caption = next(cell for cell in first_cells if cell)
        rest = [line for line in lines[4:] if not _TABLE_SEPARATOR.match(line)]
        return [caption, "", lines[2], lines[3], *rest]
    keep = separators[0]
    return [
        line
        for number, line in enumerate(lines)
        if number == keep or not _TABLE_SEPARATOR.match(line)
    ]


def _tidy_markdown(markdown: str) -> str:
    """``markdown`` cleaned of invisible characters, with its pipe tables tidied."""
    out: list[str] = []
    table: list[str] = []
    for line in clean_text(markdown).split("\n"):
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            out.extend(_tidy_table(table))
            table = []
        out.append(line)
    if table:
        out.extend(_tidy_table(table))
    return "\n".join(out)


def _plain_text(tree: HtmlElement) -> str:
    """The text of the page's article, main or body, boilerplate removed, one block
    per paragraph (white space inside one collapsed, ``<pre>`` included); headings are
    marked with ``#`` and list items with ``-``."""
    root = copy.deepcopy(tree)
    for element in list(root.iter(*_BOILERPLATE)):
        element.drop_tree()
    # The longest <article> (a page may list several), else <main>, else <body>.
    candidates = sorted(root.iter("article"), key=lambda element: -len(element.text_content()))
    candidates += [*root.iter("main"), *root.iter("body"), root]
    scope = candidates[0]
    # The source's own line breaks mean nothing in HTML; blocks get theirs below.
    for element in scope.iter():
        if isinstance(element.text, str):
            element.text = _ANY_SPACE.sub(" ", element.text)
        if isinstance(element.tail, str):
            element.tail = _ANY_SPACE.sub(" ", element.tail)
    for element in scope.iter(*_BLOCKS):
        marker = ""
        if element.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            marker = "#" * int(element.tag[1]) + " "
        elif element.tag == "li":
            marker = "- "
        element.text = "\n\n" + marker + (element.text or "")
        element.tail = "\n\n" + (element.tail or "")
    for element in scope.iter("br"):
        element.tail = "\n" + (element.tail or "")
    text = scope.text_content()
    return clean_text("\n".join(line.strip() for line in text.split("\n")))


class _OverBudget(Exception):
    """Raised by the counting parser at the first element over the cap."""


class _ElementCounter:
    """An lxml parser target that counts start tags and builds nothing."""

    def __init__(self) -> None:
        self.count = 0

    def start(self, tag: str | bytes, attrib: Any, nsmap: Any = None) -> None:
        self.count += 1
        if self.count > HTML_MAX_ELEMENTS:
            raise _OverBudget

    def end(self, tag: str | bytes) -> None:
        pass

    def data(self, data: str | bytes) -> None:
        pass

    def comment(self, text: str | bytes) -> None:
        pass

    def close(self) -> int:
        return self.count


def check_element_count(html: str) -> None:
    """Refuse a page of more than :data:`HTML_MAX_ELEMENTS` elements (``too_large``)."""
    from lxml import etree

    parser = etree.HTMLParser(target=_ElementCounter())
    try:
        parser.feed(html)
        parser.close()
    except _OverBudget:
        raise web_error(
            Kind.TOO_LARGE,
            f"The page was not read: it holds more than {HTML_MAX_ELEMENTS:,} HTML elements, "
            "doiget's cap for one page.",
        ) from None
    except (etree.LxmlError, ValueError):
        pass  # markup the counter cannot take is left to the tolerant loader


def _parse(html: str) -> HtmlElement | None:
    """The page as an lxml tree (trafilatura's tolerant loader), or None."""
    from trafilatura import load_html

    try:
        return load_html(html)
    except (ValueError, TypeError):
        return None


def _main_text(tree: HtmlElement, url: str) -> str:
    """trafilatura's markdown rendering of the main content ('' when it finds none)."""
    from trafilatura import extract

    markdown = extract(
        tree,  # extract() works on a copy of a tree it is given
        url=url,
        output_format="markdown",
        include_tables=True,
        include_links=False,
        include_comments=False,
        include_images=False,
        # The balanced default: precision mode drops real paragraphs on pages whose
        # paragraphs are short, and the fallback only catches a near-empty result.
        favor_precision=False,
    )
    return _tidy_markdown(markdown or "")


def extract_html(html: str, url: str) -> HtmlExtraction:
    """``html`` (fetched from ``url``) as markdown with its metadata and structured data.

    Never fails on bad markup: a page with no readable text gives empty markdown
    (quality ``partial``), and the caller decides what that means. A page over the
    element cap is a ``too_large`` error; the markdown stops at
    :data:`EXTRACT_MAX_TEXT_CHARS`.
    """
    check_element_count(html)
    tree = _parse(html)
    if tree is None:
        return HtmlExtraction("", None, None, None, None, None, None, "partial")
    structured = structured_data(tree)
    markdown = _main_text(tree, url)
    quality = "complete"
    if len(markdown) < MIN_MAIN_TEXT:
        quality = "partial"
        markdown = _plain_text(tree) or markdown

    from trafilatura import extract_metadata

    # Last, as it reads the tree in place (extract() and the fallback work on copies).
    metadata = extract_metadata(tree, default_url=url)
    author = _clean(metadata.author)
    if author is None and structured is not None:
        names = structured.citation.get("citation_author")
        author = "; ".join(names) if isinstance(names, list) else names
    date = metadata.date if metadata.date and _ISO_DAY.fullmatch(metadata.date) else None
    return HtmlExtraction(
        markdown=markdown[:EXTRACT_MAX_TEXT_CHARS],
        title=_clean(metadata.title),
        author=author,
        date=date,
        site=_clean(metadata.sitename),
        description=_clean(metadata.description),
        structured=structured,
        quality=quality,
    )


def _clean(value: str | None) -> str | None:
    """A metadata value on one line without invisible characters, or None if empty."""
    if not value:
        return None
    return " ".join(clean_text(value).split()) or None
