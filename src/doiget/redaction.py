"""The one redactor: every credential doiget knows of, kept out of any text.

Upstreams echo keys back in their error text, sometimes cut short or lower-cased,
and libraries log full URLs. So a secret is matched case-insensitively, also
percent-encoded, and any copy of its first 8 or more characters counts. A
secret shorter than that counts only as a whole token (not inside a longer word),
so a short test value like ``k`` cannot blank out every "k" of every message. Every
configured secret is remembered here when the settings load; error messages,
tool results, provenance details and every log record pass through
:func:`redact_known`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

REDACTED: Final = "[redacted]"
# A copy this long of a secret's beginning is taken for the secret.
PARTIAL_MIN_CHARS: Final = 8

_known: set[str] = set()
_factory_installed = False


def _lower_same_length(text: str) -> str:
    # str.lower() can lengthen some characters; positions must stay aligned.
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)


def _forms(secrets: Iterable[str]) -> list[str]:
    """Each secret as written and percent-encoded, lower-cased, longest first."""
    found: set[str] = set()
    for secret in secrets:
        if secret:
            found.update(
                form.lower() for form in (secret, quote(secret, safe=""), quote_plus(secret))
            )
    return sorted(found, key=len, reverse=True)


def _spans(lowered: str, form: str) -> Iterable[tuple[int, int]]:
    """Where ``form`` (or a copy of its first 8+ characters) occurs in ``lowered``."""
    if len(form) < PARTIAL_MIN_CHARS:
        yield from _whole_tokens(lowered, form)
        return
    head = form[:PARTIAL_MIN_CHARS]
    start = lowered.find(head)
    while start != -1:
        end = start + len(head)
        while end < len(lowered) and end - start < len(form) and lowered[end] == form[end - start]:
            end += 1
        yield start, end
        start = lowered.find(head, end)


def _whole_tokens(lowered: str, form: str) -> Iterable[tuple[int, int]]:
    """Where ``form`` occurs with no letter or digit right before or after it."""
    start = lowered.find(form)
    while start != -1:
        end = start + len(form)
        before = lowered[start - 1] if start else ""
        after = lowered[end] if end < len(lowered) else ""
        if not before.isalnum() and not after.isalnum():
            yield start, end
        start = lowered.find(form, start + 1)


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every copy of each of ``secrets`` (see the module) replaced."""
    forms = _forms(secrets)
    if not forms or not text:
        return text
    lowered = _lower_same_length(text)
    spans = sorted(span for form in forms for span in _spans(lowered, form))
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
    """A JSON-like value with every string in it passed through :func:`redact_known`."""
    if not _known:
        return value
    if isinstance(value, str):
        return redact_known(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
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
