"""A free-text reference as it stands in a bibliography, read into a cited work.

Styles differ, so this reads what most share: identifiers anywhere (DOI, arXiv id,
PMID), a quoted title when there is one, else sentences: the authors first, then
the title, then the venue; APA's "(2017)." after the authors; "et al." and
"and others" as a list cut short on purpose.
"""

from __future__ import annotations

import re
from typing import Final

from doiget.verify.cited import CitedAuthor, CitedWork
from doiget.verify.readers import _arxiv, _doi, _year, split_name
from doiget.verify.text import delatex

_URL: Final = re.compile(
    r"(?:https?://|www\.|doi:|arxiv:|(?:dx\.)?doi\.org/|arxiv\.org/)\S+", re.IGNORECASE
)
_QUOTED: Final = re.compile(r"[\"“”«]([^\"“”«»]{8,}?)[\"“”»]")
# Bounded repeats throughout: a pattern that may scan to the end of the text at every
# place it starts would take time quadratic in the text's length.
_APA_YEAR: Final = re.compile(r"\((?:1[89]\d\d|2\d\d\d)[a-z]?(?:,[^)]{0,40})?\)\.?")
_PMID: Final = re.compile(r"\bPMID:?\s?(\d{1,9})\b", re.IGNORECASE)
# A reference that is a number and nothing else: a PubMed id.
_BARE_PMID: Final = re.compile(r"(\d{1,9})")
_STOP: Final = re.compile(r"[.?!]\s+")
_MORE: Final = re.compile(r",?\s*(?:et\.?\s*al\.?|and\s+others|&\s*others)", re.IGNORECASE)
_INITIALS: Final = re.compile(r"^(?:[A-Z]\.?\s*-?){1,4}$")
# The word after a middle initial's stop that ends a name: "A. Makris," "J. Responte."
# "C. Hu and" (bounded: only the words just after the stop are read).
_NAME_ENDS_AFTER: Final = re.compile(
    r"\s+(?:[A-Z][.\s]\s*){0,2}[A-Z][\w'\u2019-]{1,30}(?:[,;.]|\s+(?:and|&)\s)"
)
# A sentence that is the year and nothing else (ACL's "Authors. 2014. Title. Venue.").
_YEAR_ALONE: Final = re.compile(r"\(?(?:1[89]|2\d)\d\d[a-z]?\)?")


def _names(segment: str) -> tuple[tuple[CitedAuthor, ...], bool]:
    more = bool(_MORE.search(segment))
    segment = _MORE.sub("", segment).strip(" ,.")
    parts = re.split(r"\s*;\s*|\s*,?\s+(?:and|&)\s+", segment) if segment else []
    pieces: list[str] = []
    for part in parts:
        tokens = [token.strip() for token in part.split(",") if token.strip()]
        index = 0
        while index < len(tokens):
            token = tokens[index]
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if following and _INITIALS.match(following) and not _INITIALS.match(token):
                pieces.append(f"{token}, {following}")  # "Vaswani, A."
                index += 2
            else:
                pieces.append(token)
                index += 1
    authors = tuple(
        author for piece in pieces if (author := split_name(piece, initials_after=True))
    )
    return authors, more


def _word_before(text: str, end: int, longest: int) -> tuple[int, str]:
    """Where the word ending at ``end`` starts, and its last ``longest`` characters at
    most (a longer word is cut: the callers only ask about short ones)."""
    floor = max(0, end - longest)
    space = text.rfind(" ", floor, end)
    start = space + 1 if space >= 0 else floor
    return start, text[start:end]


def _closes_initial(text: str, stop: int) -> bool:
    """Whether the full stop at ``stop`` closes a given-name initial inside a name
    ("A. Vaswani", "Vaswani, A., Shazeer") rather than a sentence ("Sun J. Deep ...").
    Only the ends of the two words before the stop are read, so cutting a text at all
    its stops takes time linear in its length."""
    start, last = _word_before(text, stop, 2)
    if not re.fullmatch(r"[A-Z]", last):
        return False
    if start == 0:
        return True
    previous = _word_before(text, start - 1, 3)[1]
    if previous == "" or previous.endswith(",") or re.fullmatch(r"[A-Z]\.", previous):
        return True
    # A given name's middle initial ("Eleftherios A. Makris, ..."): the name goes on
    # after the stop and ends there, where a title would go on in lower case.
    return _NAME_ENDS_AFTER.match(text, stop + 1, stop + 48) is not None


def sentences(text: str) -> list[str]:
    """``text`` cut at full stops, question and exclamation marks that end a sentence."""
    parts, start = [], 0
    for stop in _STOP.finditer(text):
        if text[stop.start()] == "." and _closes_initial(text, stop.start()):
            continue
        parts.append(text[start : stop.start()])
        start = stop.end()
    parts.append(text[start:])
    return [part.strip(" .,") for part in parts if part.strip(" .,")]


def _venue(segments: list[str]) -> str | None:
    joined = " ".join(segments)
    cleaned = re.sub(r"\((?:pp?\.?|pages?)[^)]{0,40}\)", " ", joined, flags=re.IGNORECASE)
    cleaned = re.sub(r"\b(?:pp?|pages?)\.?\s*\d.*$", " ", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"^\s*in:?\s+", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\(?\b(?:1[89]|2\d)\d\d\)?", " ", cleaned)
    cleaned = " ".join(cleaned.split()).strip(" .,;:")
    return cleaned if len(cleaned) > 1 else None


def read_free_text(text: str, key: str | None = None) -> CitedWork:
    """The cited work one free-text reference describes (fields it lacks stay empty)."""
    plain = " ".join(delatex(text).split())
    doi, arxiv_id = _doi(plain), _arxiv(plain)
    bare_pmid = _BARE_PMID.fullmatch(plain)
    pmid = bare_pmid or _PMID.search(plain)
    body = "" if bare_pmid else _PMID.sub(" ", _URL.sub(" ", plain))
    if doi:
        body = re.sub(rf"(?:\bdoi\s?:\s?)?{re.escape(doi)}", " ", body, flags=re.IGNORECASE)
    body = re.sub(r"\barXiv(?: preprint)?\s*(?:arXiv)?:?\s*[\w./-]*\d", " arXiv ", body)
    body = " ".join(body.split())
    year = _year(body)
    quoted = _QUOTED.search(body)
    if quoted:
        authors, more = _names(body[: quoted.start()].strip(" ,."))
        title = quoted.group(1).strip(" ,.")
        venue = _venue(sentences(body[quoted.end() :].strip(" ,.")))
    else:
        apa = _APA_YEAR.search(body)
        if apa and len(body[apa.end() :].split()) >= 3:
            segments = [body[: apa.start()].strip(" .,"), *sentences(body[apa.end() :].strip())]
        else:
            segments = sentences(body)
        if len(segments) > 2:
            segments = [segments[0], *(s for s in segments[1:] if not _YEAR_ALONE.fullmatch(s))]
        if len(segments) <= 1:  # a title alone, or nothing but identifiers
            authors, more, title, venue = (), False, "".join(segments), None
        else:
            authors, more = _names(segments[0])
            title = segments[1]
            venue = _venue(segments[2:])
    return CitedWork(
        key=key,
        title=title or None,
        authors=authors,
        more_authors=more,
        year=year,
        venue=venue,
        doi=doi,
        arxiv_id=arxiv_id,
        pmid=pmid.group(1) if pmid else None,
        text=text.strip(),
    )
