"""The one redactor: every credential doiget knows of, kept out of any text.

Upstreams echo keys back in their error text, cut short, re-cased, escaped or
encoded, and libraries log full URLs. :mod:`doiget.secretforms` says which shapes of
a secret count, :mod:`doiget.textviews` undoes escapes; here one compiled pattern
per set of secrets finds them all in one pass over each view of a text. Every
configured secret is remembered here when the settings load; error messages, tool
results, provenance details and every log record pass through :func:`redact_known`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from doiget.secretforms import PARTIAL_MIN_CHARS, fold, secret_forms
from doiget.textviews import Escapes, escapes_of, views

REDACTED: Final = "[redacted]"
# Long forms are found through pieces this long taken at every multiple of it: any
# stretch of PARTIAL_MIN_CHARS characters of a form holds one whole such piece.
_ANCHOR: Final = PARTIAL_MIN_CHARS // 2
_BASE64_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/")
# Set apart from letters and digits (what a whole token must be), or right after an
# escape that the views leave as it is (a token after ``%20`` or ``\n`` is whole).
_ALONE_BEFORE: Final = r"(?:(?<![^\W_])|(?<=%[0-9a-f]{2})|(?<=\\[a-z])|(?<=\\u[0-9a-f]{4}))"
_ALONE_AFTER: Final = r"(?![^\W_])"
# Control characters that set strings apart in one search (see redact_value): not
# letters or digits, so a whole token next to one stands alone as at a string's end.
_JOINERS: Final = "\x00\x01\x02\x03"

_known: set[str] = set()
_factory_installed = False


@dataclass(frozen=True)
class _Matcher:
    """One pass over a folded text finds every form of a set of secrets."""

    pattern: re.Pattern[str]
    # Each anchor piece: the long forms it is cut from, and where.
    anchors: dict[str, tuple[tuple[str, int], ...]]
    encoded: frozenset[str]
    # The escapes worth undoing: those of characters some form is spelled with.
    escapes: Escapes
    # The longest form: how far from an undone escape a match touching it can start.
    reach: int
    # A character in no form, nor in any escape of one: strings joined by it are
    # searched as each alone (None when every candidate is taken).
    joiner: str | None

    def spans_in(self, text: str) -> Iterator[tuple[int, int]]:
        """Where any form shows in ``text`` or in any view of it through its escapes
        (a view is searched only around what its escapes became)."""
        for view in views(text, self.escapes):
            folded = fold(view.text)
            for start, end in view.near_escapes(self.reach):
                for found, until in self.spans(folded, start, end):
                    yield view.origin(found), view.origin(until)

    def spans(self, folded: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        """Where any form starting in ``folded[start:end]`` shows in ``folded``.

        After a long match the search goes on PARTIAL_MIN_CHARS - 1 characters
        before its end: any other match reaching past that end has an anchor there.
        """
        position = start
        # A match starting before ``end`` ends before ``stop``, so no lookahead of
        # the pattern ever sees a false end of the text.
        stop = min(len(folded), end + self.reach + 1)
        while (match := self.pattern.search(folded, position, stop)) and match.start() < end:
            position = match.start() + 1
            if match.lastgroup == "whole":
                yield match.span()
                continue
            for form, offset in self.anchors[match.group()]:
                span = self._around(folded, match.start(), form, offset)
                if span is not None:
                    yield span
                    position = max(position, span[1] - PARTIAL_MIN_CHARS + 1)

    def _around(self, folded: str, at: int, form: str, offset: int) -> tuple[int, int] | None:
        """The stretch of ``folded`` that agrees with ``form`` around an anchor found at
        ``at`` (cut from ``offset``), when it is long enough to count."""
        before = 0
        while before < min(at, offset) and folded[at - before - 1] == form[offset - before - 1]:
            before += 1
        start, end = at - before, at + _ANCHOR
        stop = min(len(folded), at + len(form) - offset)
        while end < stop and folded[end] == form[offset + end - at]:
            end += 1
        if end - start < PARTIAL_MIN_CHARS:
            return None
        if form in self.encoded:
            while start and folded[start - 1] in _BASE64_CHARS:
                start -= 1
            while end < len(folded) and folded[end] in _BASE64_CHARS:
                end += 1
            while end < len(folded) and folded[end] == "=":
                end += 1
        return start, end


@lru_cache(maxsize=32)
def _matcher(secrets: frozenset[str]) -> _Matcher | None:
    """The matcher of ``secrets``, built once per set (None when there is nothing to find)."""
    forms = secret_forms(secrets)
    anchors: dict[str, list[tuple[str, int]]] = {}
    for form in forms.partial:
        for offset in range(0, len(form) - _ANCHOR + 1, _ANCHOR):
            anchors.setdefault(form[offset : offset + _ANCHOR], []).append((form, offset))
    branches = []
    if forms.whole:
        branches.append(f"(?P<whole>{_ALONE_BEFORE}{_alternation(forms.whole)}{_ALONE_AFTER})")
    if anchors:
        branches.append(f"(?P<part>{_alternation(anchors)})")
    if not branches:
        return None
    characters = forms.characters()
    return _Matcher(
        re.compile("|".join(branches)),
        {piece: tuple(found) for piece, found in anchors.items()},
        forms.encoded,
        escapes_of(characters),
        max(map(len, forms.partial | forms.whole)),
        next((char for char in _JOINERS if char not in characters), None),
    )


def _alternation(words: Iterable[str]) -> str:
    """A pattern matching any of ``words``, shaped as a trie so that the regex engine
    tries one branch per character instead of every word at every position."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [
            re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char
        ]
        if not branches:
            return ""
        optional = "?" if "" in node else ""
        if len(branches) == 1 and not optional:
            return branches[0]
        return f"(?:{'|'.join(branches)}){optional}"

    return pattern(trie)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every copy of each of ``secrets`` (see the module) replaced."""
    if not text:
        return text
    matcher = _matcher(frozenset(secret for secret in secrets if secret))
    if matcher is None:
        return text
    spans = sorted(matcher.spans_in(text))
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    position = 0
    for start, end in merged:
        pieces += [text[position:start], REDACTED]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def redact_known(text: str) -> str:
    """``text`` without any secret remembered by :func:`remember_secrets`."""
    return redact_text(text, _known) if _known else text


def redact_value(value: Any) -> Any:
    """A JSON-like value with every string in it passed through :func:`redact_known`.

    Most values hold no secret: their strings are searched together, in one pass over
    them joined by a character no form of a secret has (so no match spans two of
    them, and each string reads in its view as it would alone), and such a value
    comes back as it is; only one holding a secret is rebuilt, string by string.
    """
    if not _known:
        return value
    matcher = _matcher(frozenset(_known))
    if matcher is None:
        return value
    texts: list[str] = []
    if _gather(value, texts) and matcher.joiner is not None:
        joined = matcher.joiner.join(texts)
        if next(matcher.spans_in(joined), None) is None:
            return value
    return _redacted(value)


def _gather(value: Any, texts: list[str]) -> bool:
    """Add the strings in ``value`` to ``texts``; False when the value holds a tuple
    (which the redacted copy turns into a list, so it must be rebuilt)."""
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, dict):
        return all(_gather(item, texts) for item in value.values())
    elif isinstance(value, list):
        return all(_gather(item, texts) for item in value)
    elif isinstance(value, tuple):
        return False
    return True


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact_known(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item) for item in value]
    return value


def remember_secrets(secrets: Iterable[str]) -> None:
    """Add credentials to those kept out of every text, and make sure every log
    record (doiget's and every library's, at any level) is redacted as it is made."""
    global _factory_installed
    _known.update(secret for secret in secrets if secret)
    if _known and not _factory_installed:
        _install_record_factory()
        _factory_installed = True


def _install_record_factory() -> None:
    make_record = logging.getLogRecordFactory()

    def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        message = record.getMessage()
        clean = redact_known(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact_known(text)
            record.exc_info = None
        return record

    logging.setLogRecordFactory(redacted_record)
