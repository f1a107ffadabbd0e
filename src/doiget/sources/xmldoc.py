"""Reading upstream XML safely: no network, no entity expansion, no huge trees."""

from __future__ import annotations

from typing import Final

from lxml import etree

from doiget.sources.shape import ShapeError, text

# A DOCTYPE naming an external DTD (PubMed's do) is never fetched or expanded.
SAFE_PARSER: Final = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
)


def parse_xml(body: bytes, what: str) -> etree._Element:
    """The root element of ``body``; ShapeError naming ``what`` when it is not XML."""
    try:
        return etree.fromstring(body, SAFE_PARSER)
    except etree.XMLSyntaxError as exc:
        raise ShapeError(f"returned {what} that is not well-formed XML ({exc})") from exc


def inner_text(node: etree._Element | None) -> str | None:
    """All the text inside ``node`` (inline markup such as <i> or MathML flattened)."""
    if node is None:
        return None
    flat = etree.tostring(node, method="text", encoding="unicode", with_tail=False)
    return text(flat)
