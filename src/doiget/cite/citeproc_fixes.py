"""Where citeproc-py departs from the CSL specification, and so from citeproc-js (the
reference implementation), corrected at the place the rule lives.

Each fix replaces one method of citeproc-py's CSL model or string algebra and cites
the rule it implements; :func:`apply` installs them once, before the first rendering.
Measured against citeproc-js by benchmarks/csl_conformance.py; each fix has its own
test in tests/unit/test_citeproc_fixes.py.

- Punctuation at seams: a period or comma after a closing quote moves inside it when
  the locale says ``punctuation-in-quote``, and a period after ``?`` or ``!`` is
  dropped (CSL 1.0.2, "Punctuation in Quotes"; citeproc-py read the option and
  ignored it).
- ``initialize="false"`` keeps given names whole (CSL "Name" attributes; citeproc-py
  initialised them whenever ``initialize-with`` was set).
- ``capitalize-first`` / ``capitalize-all`` change only lowercase words, and title
  case capitalises each part of a hyphenated word and keeps stop words lowercase
  when punctuation follows them (CSL "Text-case").
- A page range's last page is abbreviated only when both ends have as many digits.
- ``display`` reaches the output (citeproc-py dropped it): plain text separates a
  left-margin number from the entry as citeproc-js's text output does.
- Substitution suppresses the substituted variables for the rest of the entry, also
  when the substitute is a macro (CSL "Substitute").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Final

PUNCTUATION_IN_QUOTE: ContextVar[bool] = ContextVar("punctuation_in_quote", default=False)
_CSL_NS: Final = "http://purl.org/net/xbiblio/csl"
_CLOSE_QUOTES: Final = '\u201d\u2019"'
# The private-use characters doiget's formatter marks styling with.
_MARKS: Final = "".join(chr(code) for code in range(0xE000, 0xE018))
# Words title case leaves lowercase (CSL 1.0.2, "Title case conversion": prepositions,
# conjunctions, articles and name particles), as citeproc-js applies them.
STOP_WORDS: Final = frozenset(
    [
        "a",
        "about",
        "above",
        "across",
        "afore",
        "after",
        "against",
        "al",
        "along",
        "alongside",
        "amid",
        "amidst",
        "among",
        "amongst",
        "an",
        "and",
        "anenst",
        "apropos",
        "apud",
        "around",
        "as",
        "aside",
        "astride",
        "at",
        "athwart",
        "atop",
        "barring",
        "before",
        "behind",
        "below",
        "beneath",
        "beside",
        "besides",
        "between",
        "beyond",
        "but",
        "by",
        "c",
        "ca",
        "circa",
        "d'",
        "de",
        "despite",
        "down",
        "during",
        "et",
        "except",
        "for",
        "forenenst",
        "from",
        "given",
        "in",
        "inside",
        "into",
        "lest",
        "like",
        "modulo",
        "near",
        "next",
        "nor",
        "notwithstanding",
        "of",
        "off",
        "on",
        "onto",
        "or",
        "out",
        "over",
        "per",
        "plus",
        "pro",
        "qua",
        "sans",
        "since",
        "so",
        "than",
        "the",
        "through",
        "thru",
        "throughout",
        "thruout",
        "till",
        "to",
        "toward",
        "towards",
        "under",
        "underneath",
        "until",
        "unto",
        "up",
        "upon",
        "v",
        "v.",
        "van",
        "versus",
        "via",
        "vis-à-vis",
        "von",
        "vs",
        "vs.",
        "with",
        "within",
        "without",
        "yet",
    ]
)
_STOP_WORD_PUNCTUATION: Final = re.compile(r"^([^\W\d_]+)([:;,.!?]*)$")


def _text_of(value: Any) -> str:
    return "" if value is None else str(value)


def _with_last_char_inserted(left: Any, mark: str) -> Any:
    """``left`` (a String or MixedString ending in closing quotes) with ``mark`` put
    before those quotes."""
    from citeproc.string import MixedString, String

    segments = list(left) if isinstance(left, MixedString) else [left]
    for index in range(len(segments) - 1, -1, -1):
        text = str(segments[index])
        if not text:
            continue
        body = text.rstrip(_CLOSE_QUOTES + _MARKS)
        kind = type(segments[index]) if isinstance(segments[index], String) else String
        segments[index] = kind(body + mark + text[len(body) :])
        break
    return MixedString(segments)


def _seam(left: Any, other: Any) -> tuple[Any, Any]:
    """``left`` and ``other`` adjusted where they meet: the citeproc-py rules (no double
    space, no doubled mark) plus the CSL rules for punctuation next to quotes. Styling
    marks (a formatter's private-use characters) at the end of ``left`` are looked
    through, so ``et al.`` in italics still absorbs the period that follows."""
    from citeproc.string import _strip_first_char

    other = _normalize_seam(left, other)
    left_text, other_text = _text_of(left).rstrip(_MARKS), _text_of(other)
    if not left_text or not other_text or other_text[0] not in ".,;:":
        return left, other
    body = left_text.rstrip(_CLOSE_QUOTES)
    quoted = len(body) < len(left_text)
    before, mark = (body[-1:] if body else ""), other_text[0]
    if before == mark or (mark == "." and before in "?!"):
        return left, _strip_first_char(other)
    if quoted and mark in ".," and PUNCTUATION_IN_QUOTE.get() and before != ".":
        return _with_last_char_inserted(left, mark), _strip_first_char(other)
    return left, other


def _normalize_seam(left: Any, other: Any) -> Any:
    """citeproc-py's seam rule (no double space, no doubled punctuation), looking
    through the styling marks at the end of ``left``."""
    from citeproc.string import SEAM_PUNCTUATION, _strip_first_char

    left_text, other_text = str(left).rstrip(_MARKS), str(other)
    if not left_text or not other_text:
        return other
    last, first = left_text[-1], other_text[0]
    if (last == first == " ") or (last == first and first in SEAM_PUNCTUATION):
        return _strip_first_char(other)
    return other


def _last_page(original: Any, self: Any, first: str, last: str) -> str:
    """A range's last page abbreviated only when both ends have as many digits: 1-29
    stays 1-29 (citeproc-py printed 1-9, another page)."""
    if len(first) != len(last):
        return last
    return str(original(self, first, last))


def _mixed_add(original: Any, self: Any, other: Any) -> Any:
    if other == "":
        return self
    left, other = _seam(self, other)
    if other == "" or other == []:
        return left
    return original(left, other)


def _initialize(original: Any, self: Any, given: str, mark: str, context: Any) -> str:
    """``initialize="false"``: given names stay whole; lone initials get the mark."""
    if self.get("initialize", "true").lower() != "false":
        return str(original(self, given, mark, context))
    stop = mark.rstrip()
    return " ".join(
        part + stop if len(part) == 1 and part.isupper() else part for part in given.split()
    )


def _words_title_cased(words: Iterator[Any]) -> list[Any]:
    output: list[Any] = []
    after_colon = True
    for word in words:
        text = str(word)
        bare = _STOP_WORD_PUNCTUATION.match(text)
        is_stop = bare is not None and bare.group(1) in STOP_WORDS
        if word.islower() and (not is_stop or after_colon):
            word = _capitalize_parts(word)
        elif word.islower():
            word = word.soft_lower()
        elif "-" in text:
            word = _capitalize_parts(word)
        after_colon = text[-1:] in (":", ".", "?", "!")
        output.append(word)
    return output


def _capitalize_parts(word: Any) -> Any:
    """Each lowercase part of a hyphenated word capitalised (``pre-training`` ->
    ``Pre-Training``); a part with capitals stays as it is."""
    text = str(word)
    parts = [_upper_first_letter(part) if part.islower() else part for part in text.split("-")]
    return _like(word, "-".join(parts))


def _upper_first_letter(text: str) -> str:
    """``text`` with its first letter capitalised, past any opening quote or bracket."""
    for index, char in enumerate(text):
        if char.isalpha():
            return text[:index] + char.upper() + text[index + 1 :]
    return text


def _like(word: Any, text: str) -> Any:
    from citeproc.string import MixedString, NoCase, String

    if isinstance(word, NoCase):
        return word
    if isinstance(word, MixedString):
        return String(text)
    return type(word)(text)


def _case(original: Any, self: Any, text: Any, language: str | None = None) -> Any:
    """Text-case as the CSL specification words it (see the module docstring)."""
    text_case = self.get("text-case")
    if text_case == "capitalize-first":
        first = next(iter(text.words()), None)
        return text.capitalize_first() if first is not None and first.islower() else text
    if text_case == "capitalize-all":
        return " ".join(
            str(word.capitalize_first() if word.islower() else word) for word in text.words()
        )
    if text_case == "title" and language in (None, "en"):
        return " ".join(map(str, _words_title_cased(text.words())))
    return original(self, text, language)


def _substitute_render(original: Any, self: Any, item: Any, context: Any = None, **kw: Any) -> Any:
    """Note each variable the substitute renders and suppress it for the rest of the
    entry (citeproc-py suppressed only a child's own ``variable`` attribute, so a
    substituted macro printed its title twice)."""
    layout = (context if context is not None else self).get_layout()
    outer = getattr(layout, "rendered_variables", None)
    layout.rendered_variables = []
    try:
        text = original(self, item, context=context, **kw)
        if text:
            for variable in layout.rendered_variables:
                layout.repressed.setdefault(f"{{{_CSL_NS}}}text", []).append(variable)
        return text
    finally:
        layout.rendered_variables = outer


def _text_variable(original: Any, self: Any, item: Any, context: Any) -> Any:
    """Text's variable lookup, noted for an enclosing substitute."""
    text = original(self, item, context)
    noted = getattr(context.get_layout(), "rendered_variables", None)
    if text and noted is not None:
        noted.append(self.get("variable"))
    return text


def _layout_children(original: Any, self: Any, item: Any, **kwargs: Any) -> Any:
    """A bibliography with ``second-field-align``: the first field in the left margin,
    the rest inline (as citeproc-js lays it out)."""
    from citeproc.source import VariableError
    from citeproc.string import join

    parent = self.getparent()
    if parent.tag != f"{{{_CSL_NS}}}bibliography" or not parent.get("second-field-align"):
        return original(self, item, **kwargs)
    parts: list[Any] = []
    for child in self.iterchildren():
        try:
            text = child.render(item, **kwargs)
        except VariableError:
            text = None
        if text is not None:
            parts.append(text)
    if len(parts) < 2:
        return join(parts) if parts else None
    formatter = self.get_formatter()
    if not hasattr(formatter, "Display"):
        return join(parts)
    return join(
        [
            formatter.Display("left-margin", parts[0]),
            formatter.Display("right-inline", join(parts[1:])),
        ]
    )


AMBIGUOUS: ContextVar[frozenset[str]] = ContextVar("ambiguous", default=frozenset())


def _condition(original: Any, self: Any, item: Any, context: Any = None, **kw: Any) -> Any:
    """``disambiguate="true"`` holds only for a cite that reads like another one
    (citeproc-py took every such branch); the renderer finds those and sets AMBIGUOUS."""
    from citeproc.model import ConditionFailed

    if self.get("disambiguate") == "true" and item.key not in AMBIGUOUS.get():
        others = [name for name in self.attrib if name not in ("disambiguate", "match")]
        if not others or self.get("match", "all") == "all":
            raise ConditionFailed
    return original(self, item, context=context, **kw)


def _wrap(original: Any, self: Any, string: Any) -> Any:
    """``display`` (block, left-margin, right-inline, indent) passed to the formatter."""
    text = original(self, string)
    display = self.get("display")
    formatter = self.get_formatter()
    if text is None or not display or not hasattr(formatter, "Display"):
        return text
    return formatter.Display(display, text)


def _patch(owner: type, name: str, replacement: Any) -> None:
    """``owner.name`` replaced by ``replacement(original, self, ...)``."""
    original = getattr(owner, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return replacement(original, self, *args, **kwargs)

    setattr(owner, name, functools.wraps(original)(method))


@functools.cache
def apply() -> None:
    """Install the fixes into citeproc-py (once per process)."""
    from citeproc import model, string

    string.normalize_seam = model.normalize_seam = _normalize_seam
    _patch(model.FormatNumber, "_format_last_page", _last_page)
    original_add = string.MixedString.__add__

    def add(self: Any, other: Any) -> Any:
        return _mixed_add(original_add, self, other)

    string.MixedString.__add__ = add
    _patch(model.Affixed, "wrap", _wrap)
    _patch(model.Name, "initialize", _initialize)
    _patch(model.TextCased, "case", _case)
    _patch(model.Substitute, "render", _substitute_render)
    _patch(model.Text, "_variable", _text_variable)
    _patch(model.Layout, "render_children", _layout_children)
    _patch(model.If, "render", _condition)
