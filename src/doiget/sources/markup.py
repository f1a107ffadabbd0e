"""Plain text from the bits of markup upstreams put in abstracts and titles (JATS, HTML)."""

from __future__ import annotations

from lxml import etree, html

from doiget.sources.shape import text

_BLOCKS = frozenset({"p", "title", "sec", "div", "br", "li"})


def plain_text(fragment: str) -> str | None:
    """The text of a JATS/HTML fragment with tags dropped and whitespace collapsed."""
    if "<" not in fragment:
        return text(fragment)
    try:
        # Namespace prefixes such as ``jats:p`` become plain tag names in the HTML parser.
        root = html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return text(fragment)
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        name = node.tag.lower().rsplit(":", 1)[-1]
        if name == "title" and (node.text or "").strip().lower() == "abstract":
            node.text = ""
        if name in _BLOCKS:
            node.tail = " " + (node.tail or "")  # keep paragraphs from running together
    return text(root.text_content())
