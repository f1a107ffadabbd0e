"""A note's plain text as the HTML Zotero stores notes in, with nothing of it read as
markup: every character of the text is escaped, paragraphs (blank-line separated)
become ``<p>``, quoted passages ``<blockquote>`` followed by their page."""

from __future__ import annotations

import html
from collections.abc import Sequence

from doiget.zotero.contracts import Quote


def _paragraphs(text: str) -> list[str]:
    blocks = [block.strip() for block in text.replace("\r\n", "\n").split("\n\n")]
    return [
        "<p>" + "<br/>".join(html.escape(line) for line in block.split("\n")) + "</p>"
        for block in blocks
        if block
    ]


def note_html(text: str | None, quotes: Sequence[Quote] = (), source: str | None = None) -> str:
    """The note's HTML: its paragraphs, then each quote with its page (and ``source``, the
    work quoted, named once after them when given)."""
    parts = ['<div data-schema-version="9">', *_paragraphs(text or "")]
    for quote in quotes:
        parts.append("<blockquote>" + "".join(_paragraphs(quote.text)) + "</blockquote>")
        if quote.page:
            parts.append(f"<p>(p. {html.escape(quote.page)})</p>")
    if source:
        parts.append(f"<p>{html.escape(source)}</p>")
    parts.append("</div>")
    return "".join(parts)
