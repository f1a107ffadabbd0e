"""Formatted references: bibliography entries and in-text citations in any CSL style.

citeproc-py renders (with :mod:`doiget.cite.citeproc_fixes` installed) through a
formatter that marks styling with private-use characters instead of writing markup;
:func:`_finish` then writes the marked text as plain text, HTML or Markdown, escaping
the text itself for the target. One rendering, three outputs, and a title with ``<``
or ``*`` in it cannot become markup.

citeproc-py is imported on the first rendering only: start-up does not pay for it.
"""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from doiget.cite.caveats import joined_notes, unidentified_note
from doiget.cite.csl import to_csl
from doiget.cite.styles import Style, locale_path
from doiget.controls import one_line
from doiget.errors import DoigetError, ErrorCode
from doiget.integrity import describe
from doiget.models import Work

TextFormat = Literal["text", "html", "markdown"]

# Styling marks: (open, close) private-use characters per kind.
_MARKS: Final = {
    "italic": ("\ue000", "\ue001"),
    "bold": ("\ue002", "\ue003"),
    "smallcaps": ("\ue004", "\ue005"),
    "sup": ("\ue006", "\ue007"),
    "sub": ("\ue008", "\ue009"),
    "underline": ("\ue00a", "\ue00b"),
    "left-margin": ("\ue010", "\ue011"),
    "right-inline": ("\ue012", "\ue013"),
    "block": ("\ue014", "\ue015"),
    "indent": ("\ue016", "\ue017"),
}
_HTML: Final = {
    "italic": ("<i>", "</i>"),
    "bold": ("<b>", "</b>"),
    "smallcaps": ('<span style="font-variant:small-caps;">', "</span>"),
    "sup": ("<sup>", "</sup>"),
    "sub": ("<sub>", "</sub>"),
    "underline": ('<span style="text-decoration:underline;">', "</span>"),
    "left-margin": ('<div class="csl-left-margin">', "</div>"),
    "right-inline": ('<div class="csl-right-inline">', "</div>"),
    "block": ('<div class="csl-block">', "</div>"),
    "indent": ('<div class="csl-indent">', "</div>"),
}
# What plain text keeps of a display (as citeproc-js's text output does).
_PLAIN: Final = {
    "left-margin": ("", " "),
    "block": ("\n", ""),
    "indent": ("\n    ", ""),
}
_MARKDOWN: Final = {
    "italic": ("*", "*"),
    "bold": ("**", "**"),
    "sup": ("<sup>", "</sup>"),
    "sub": ("<sub>", "</sub>"),
    **_PLAIN,
}
_MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>#|])")
_ANY_MARK: Final = re.compile("[\ue000-\ue017]")
_APOSTROPHE: Final = re.compile(r"(?<=[^\W_])'")


def _wrapper(kind: str) -> Callable[[Any], str]:
    opening, closing = _MARKS[kind]

    def wrap(text: Any) -> str:
        return f"{opening}{text}{closing}"

    return wrap


class _MarkedFormatter:
    """A citeproc-py formatter (its module interface) that marks instead of writing."""

    Italic = Oblique = staticmethod(_wrapper("italic"))
    Bold = staticmethod(_wrapper("bold"))
    SmallCaps = staticmethod(_wrapper("smallcaps"))
    Superscript = staticmethod(_wrapper("sup"))
    Subscript = staticmethod(_wrapper("sub"))
    Underline = staticmethod(_wrapper("underline"))

    @staticmethod
    def Light(text: Any) -> Any:
        return text

    @staticmethod
    def preformat(text: Any) -> Any:
        return text

    @staticmethod
    def Display(kind: str, text: Any) -> str:
        return _wrapper(kind)(text) if kind in _MARKS else str(text)


def _typographic(text: str, outer: tuple[str, str], inner: tuple[str, str]) -> str:
    """Straight quotes as the locale's curly ones (alternating outer and inner quotes
    by depth), apostrophes as right single quotes, as citeproc-js prints them."""
    text = _APOSTROPHE.sub("\u2019", text)
    out: list[str] = []
    stack: list[str] = []
    for index, char in enumerate(text):
        if char == outer[0] or char == inner[0]:
            stack.append(char)
        elif (char == outer[1] or char == inner[1]) and stack and char != "\u2019":
            stack.pop()
        elif char == '"':
            before = text[index - 1] if index else " "
            if before.isspace() or before in "([{\ue000\ue002\ue010\ue012" or not index:
                pair = inner if stack and stack[-1] == outer[0] else outer
                stack.append(pair[0])
                char = pair[0]
            else:
                opened = stack.pop() if stack else outer[0]
                char = inner[1] if opened == inner[0] else outer[1]
        out.append(char)
    return "".join(out)


def _finish(marked: str, text_format: TextFormat) -> str:
    """Marked text as plain text, HTML or Markdown, on one line (a line break in a title
    would start a Markdown heading or list of its own)."""
    marked = one_line(marked)
    if text_format == "html":
        table = _HTML
        escaped = html.escape(marked, quote=False)
    elif text_format == "markdown":
        table = _MARKDOWN
        escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", marked)
    else:
        table, escaped = _PLAIN, marked
    for kind, (opening, closing) in _MARKS.items():
        wrote_open, wrote_close = table.get(kind, ("", ""))
        escaped = escaped.replace(opening, wrote_open).replace(closing, wrote_close)
    return _ANY_MARK.sub("", escaped).strip()


def _bracketed(work: Work) -> str | None:
    note = unidentified_note(work)
    return f"[{note}]" if note else None


def integrity_notice(work: Work) -> str | None:
    """The notice a formatted reference (and a RIS record) to ``work`` carries, or None:
    its integrity notices in brackets, worded by :func:`doiget.integrity.describe`, the
    one wording of every format and style."""
    described = describe(work)
    return f"[{described}]" if described else None


@dataclass(frozen=True, slots=True)
class Rendered:
    """One rendering: entries in the style's bibliography order (each with the index of
    its work), the in-text citation of each work alone, and of all of them together."""

    entries: list[tuple[int, str]]
    citations: list[str]
    together: str


def _item(work: Work, index: int) -> dict[str, Any]:
    item = to_csl(work, f"item{index}")
    item.pop("note", None)  # the integrity notice is appended by the formatter itself
    item.pop("abstract", None)
    return item


def render(
    works: Sequence[Work], style: Style, locale: str, text_format: TextFormat = "text"
) -> Rendered:
    """Format ``works`` in ``style``; a style citeproc-py cannot load or render is an
    error that says which and why, never a wrong reference."""
    try:
        marked = _render_marked([_item(work, i) for i, work in enumerate(works)], style, locale)
    except DoigetError:
        raise
    except Exception as exc:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"style {style.id!r} could not be rendered ({type(exc).__name__}: "
            f"{str(exc)[:160]}); choose another style or export bibtex, csl-json or ris.",
        ) from exc
    entries_marked, singles, together = marked
    quotes = _quote_terms(locale)

    def finish(text: str) -> str:
        return _finish(_typographic(text, *quotes), text_format)

    entries = []
    for index, text in entries_marked:
        entry = finish(text)
        notice = joined_notes(integrity_notice(works[index]), _bracketed(works[index]))
        if notice:
            notice = one_line(notice)
            entry += " " + (html.escape(notice) if text_format == "html" else notice)
        entries.append((index, entry))
    return Rendered(entries, [finish(text) for text in singles], finish(together))


def _render_marked(
    items: list[dict[str, Any]], style: Style, locale: str
) -> tuple[list[tuple[int, str]], list[str], str]:
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
    )
    from citeproc.source.json import CiteProcJSON

    from doiget.cite import citeproc_fixes

    citeproc_fixes.apply()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = CitationStylesStyle(str(style.path), locale=locale, validate=False)
    token = citeproc_fixes.PUNCTUATION_IN_QUOTE.set(_punctuation_in_quote(parsed))
    try:
        source = CiteProcJSON(items)
        keys = [str(item["id"]) for item in items]

        def bibliography() -> Any:
            made = CitationStylesBibliography(parsed, source, _MarkedFormatter)
            citations = [Citation([CitationItem(key)]) for key in keys]
            for citation in citations:
                made.register(citation)
            return made, citations

        def unknown(item: Any) -> None:
            raise DoigetError(ErrorCode.INTERNAL_ERROR, f"no item {item.key} to cite")

        singles_bib, singles = bibliography()
        single_texts = [str(singles_bib.cite(citation, unknown)) for citation in singles]
        ambiguous = frozenset(
            key
            for key, text in zip(keys, single_texts, strict=True)
            if single_texts.count(text) > 1
        )
        if ambiguous:  # cites that read alike take the style's disambiguate branches
            ambiguity = citeproc_fixes.AMBIGUOUS.set(ambiguous)
            try:
                singles_bib, singles = bibliography()
                single_texts = [str(singles_bib.cite(c, unknown)) for c in singles]
            finally:
                citeproc_fixes.AMBIGUOUS.reset(ambiguity)
        together_bib, _ = bibliography()
        together = Citation([CitationItem(key) for key in keys])
        together_bib.register(together)
        together_text = str(together_bib.cite(together, unknown))
        entries: list[tuple[int, str]] = []
        if parsed.has_bibliography():
            singles_bib.sort()
            texts = singles_bib.bibliography()
            entries = [
                (keys.index(key), str(text))
                for key, text in zip(singles_bib.keys, texts, strict=True)
            ]
        return entries, single_texts, together_text
    finally:
        citeproc_fixes.PUNCTUATION_IN_QUOTE.reset(token)


def _punctuation_in_quote(parsed: Any) -> bool:
    return str(parsed.root.get_locale_option("punctuation-in-quote")).lower() == "true"


def _quote_terms(locale: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The locale's (open, close) quotes and inner quotes."""
    from lxml import etree

    terms = {"open-quote": "\u201c", "close-quote": "\u201d"}
    terms |= {"open-inner-quote": "\u2018", "close-inner-quote": "\u2019"}
    tree = etree.parse(str(locale_path(locale)))
    for term in tree.iter("{http://purl.org/net/xbiblio/csl}term"):
        name = term.get("name")
        if name in terms and term.text:
            terms[name] = term.text
    return (terms["open-quote"], terms["close-quote"]), (
        terms["open-inner-quote"],
        terms["close-inner-quote"],
    )
