"""A note's plain text as the HTML Zotero stores notes in, with nothing of it read as
markup: every character is escaped; blocks separated by a blank line become ``<p>``,
and a run of lines that begin with ``>`` (a quoted passage, as in e-mail) becomes a
``<blockquote>``."""

from __future__ import annotations

import html
from collections.abc import Iterator


def _blocks(text: str) -> Iterator[tuple[bool, list[str]]]:
    """The note's blocks in order: (is a quote, its lines)."""
    quote: bool | None = None
    lines: list[str] = []
    for raw in [*text.replace("\r\n", "\n").split("\n"), ""]:
        stripped = raw.strip()
        quoted = stripped.startswith(">")
        if not stripped or (quote is not None and quoted != quote):
            if lines and quote is not None:
                yield quote, lines
            quote, lines = None, []
        if stripped:
            quote = quoted
            lines.append(stripped[1:].strip() if quoted else stripped)


def note_html(text: str, source: str | None = None) -> str:
    """The note's HTML (``source``, the work it is about, named last when given)."""
    parts = ['<div data-schema-version="9">']
    for quote, lines in _blocks(text):
        body = "<p>" + "<br/>".join(html.escape(line) for line in lines) + "</p>"
        parts.append(f"<blockquote>{body}</blockquote>" if quote else body)
    if source:
        parts.append(f"<p>{html.escape(source)}</p>")
    parts.append("</div>")
    return "".join(parts)
