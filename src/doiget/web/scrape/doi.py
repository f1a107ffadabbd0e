"""The DOI a scraped page is about, and what Crossref records against that DOI.

:func:`detect_doi` looks in order of authority: the page's citation meta tags, then
its URL, then the top of its text. :func:`retraction_status` turns Crossref's
``updated-by`` notices into the result's ``retractionStatus``, and reports nothing at
all when Crossref records no retraction, expression of concern or correction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from doiget.errors import DoigetError
from doiget.models import INTEGRITY_SEVERITY, UpdateNotice, notice_source
from doiget.refs import parse_ref

# Meta tags (lower-cased names) that may carry the page's DOI, most specific first.
DOI_TAGS: Final = ("citation_doi", "dc.identifier", "dcterms.identifier", "prism.doi")
# How much of the text is searched, and where the text stops being about the page.
TEXT_WINDOW: Final = 4096
_REFERENCES: Final = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\d+\.?[ \t]*)?"
    r"(?:references|bibliography|works cited|literature cited|reference list)[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# A DOI as it appears in running text or a URL: it ends at white space, a quote or
# a bracket that cannot be part of it.
_DOI: Final = re.compile(r"10\.\d{4,9}/[^\s\"'<>{}|\\^`\[\]]+")
_TRAILING: Final = ".,;:!?*'\""
# URL path segments after a DOI that pick a view of the article, not a DOI part.
_VIEWER_SEGMENTS: Final = frozenset(
    {
        "abstract",
        "citedby",
        "epdf",
        "epub",
        "figures",
        "full",
        "fulltext",
        "html",
        "info",
        "metrics",
        "pdf",
        "pdfdirect",
        "pdfft",
        "reader",
        "references",
        "suppl",
        "supplemental",
        "summary",
        "tables",
        "xml",
    }
)
_FILE_EXTENSION: Final = re.compile(r"\.(?:pdf|html?|xml|epub)$", re.IGNORECASE)
# bioRxiv/medRxiv URLs add a version and a view: 10.1101/2020.01.01.123456v2.full
_RXIV_VERSION: Final = re.compile(r"^(10\.1101/[\d.]*\d)v\d+.*$")

_SOURCES: Final = frozenset({"retraction-watch", "publisher"})


def _trim(candidate: str) -> str:
    """``candidate`` without trailing punctuation or unbalanced closing brackets."""
    while True:
        trimmed = candidate.rstrip(_TRAILING)
        if trimmed.endswith(")") and trimmed.count(")") > trimmed.count("("):
            trimmed = trimmed[:-1]
        if trimmed == candidate:
            return candidate
        candidate = trimmed


def _normalised(candidate: str) -> str | None:
    """The bare lower-case DOI, or None when ``candidate`` is not one doiget accepts."""
    try:
        ref = parse_ref(_trim(candidate))
    except DoigetError:
        return None
    return ref.value if ref.kind == "doi" else None


def _found(text: str) -> Iterator[str]:
    """Every acceptable DOI in ``text``, in order."""
    for match in _DOI.finditer(text):
        doi = _normalised(match.group())
        if doi is not None:
            yield doi


def _from_tags(tags: Mapping[str, Any]) -> str | None:
    by_name = {str(name).lower(): value for name, value in tags.items()}
    for name in DOI_TAGS:
        value = by_name.get(name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                doi = next(_found(item), None)
                if doi is not None:
                    return doi
    return None


def _from_url_part(part: str) -> str | None:
    match = _DOI.search(unquote(part))
    if not match:
        return None
    candidate = _trim(match.group())
    while True:
        stripped = _FILE_EXTENSION.sub("", candidate)
        head, _, last = stripped.rpartition("/")
        if last.lower() in _VIEWER_SEGMENTS and _DOI.fullmatch(head):
            stripped = head
        if stripped == candidate:
            break
        candidate = stripped
    return _normalised(_RXIV_VERSION.sub(r"\1", candidate))


def _from_url(url: str) -> str | None:
    """A DOI in the URL's path, else in one of its query values (``?id=10....``)."""
    parts = urlsplit(url)
    found = _from_url_part(parts.path)
    if found is not None:
        return found
    for _, value in parse_qsl(parts.query):
        found = _from_url_part(value)
        if found is not None:
            return found
    return None


def _from_text(text: str) -> str | None:
    """The first DOI in the top of ``text``, before any references heading."""
    heading = _REFERENCES.search(text, 0, TEXT_WINDOW)
    head = text[: heading.start() if heading else TEXT_WINDOW]
    return next(_found(head), None)


def detect_doi(citation_tags: Mapping[str, Any] | None, url: str, text: str) -> str | None:
    """The bare lower-case DOI of the page, or None.

    Looked for in ``citation_doi`` (then ``dc.identifier`` and similar tags), then the
    URL (trailing viewer segments such as ``/full`` or ``/pdf`` dropped), then the first
    4 KB of ``text`` up to a "References" heading.
    """
    return (
        (_from_tags(citation_tags) if citation_tags else None) or _from_url(url) or _from_text(text)
    )


def retraction_status(notices: Iterable[UpdateNotice]) -> dict[str, Any] | None:
    """``{retracted, kind, date?, noticeDoi?, source?}`` from Crossref's notices.

    Only notices that update this work (``updated-by``) count, read as ``Work.integrity``
    reads them. A retraction (also a withdrawal or removal) outranks an expression of
    concern, which outranks a correction (also an erratum, corrigendum or partial
    retraction); of equal ones the first wins. None when there is no such notice:
    absence is never read as a status.
    """
    ranked = [
        (kind, notice)
        for notice in notices
        if notice.direction == "updated-by" and (kind := notice.integrity_kind) is not None
    ]
    if not ranked:
        return None
    kind, notice = max(ranked, key=lambda pair: INTEGRITY_SEVERITY[pair[0]])
    retracted = notice.is_retraction
    status: dict[str, Any] = {"retracted": retracted, "kind": "retraction" if retracted else kind}
    if notice.date:
        status["date"] = notice.date
    if notice.doi:
        status["noticeDoi"] = notice.doi
    source = notice_source(notice.source)
    if source in _SOURCES:
        status["source"] = source
    return status
