"""Reading upstream XML safely: no network, no entity expansion, no huge trees."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from doiget.sources.shape import ShapeError, text

if TYPE_CHECKING:
    from lxml import etree


@cache
def _safe_parser() -> etree.XMLParser:
    """The parser for every upstream document, built on first use (lxml loads then).

    A DOCTYPE naming an external DTD (PubMed's do) is never fetched or expanded.
    """
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def parse_xml(body: bytes, what: str) -> etree._Element:
    """The root element of ``body``; ShapeError naming ``what`` when it is not XML."""
    from lxml import etree

    try:
        return etree.fromstring(body, _safe_parser())
    except etree.XMLSyntaxError as exc:
        raise ShapeError(f"returned {what} that is not well-formed XML ({exc})") from exc


def inner_text(node: etree._Element | None) -> str | None:
    """All the text inside ``node`` (inline markup such as <i> or MathML flattened)."""
    if node is None:
        return None
    from lxml import etree

    flat = etree.tostring(node, method="text", encoding="unicode", with_tail=False)
    return text(flat)
