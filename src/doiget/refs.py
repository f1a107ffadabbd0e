"""Parsing and normalising paper references (DOIs, arXiv ids) and their store keys.

The command line and the MCP tools accept the same wide forms people paste
(``doi:``, resolver URLs, ``arXiv:``, arxiv.org links, old-style arXiv ids, DOIs with
``:`` ``;`` ``<`` ``>``), all read by :func:`parse_ref`. Everything that is not one of
them is an ``INVALID_REF`` whose message lists those forms, so the caller can correct
the input in one step. What stays refused in every form: control characters and
white space inside an id, ``.``/``..`` path parts, more than 256 characters.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import quote, unquote

from doiget.errors import DoigetError, ErrorCode, quoted

RefKind = Literal["doi", "arxiv", "local"]

MAX_REF_LENGTH = 256
SAFEKEY_MAX_BYTES = 192

ACCEPTED_FORMS = (
    "a DOI ('10.1234/abc', optionally prefixed 'doi:', 'https://doi.org/' or "
    "'http://dx.doi.org/'), a new-style arXiv id ('2401.12345', '2401.12345v2', "
    "'arXiv:2401.12345') or an old-style arXiv id ('hep-th/9901001', 'math.GT/0309136v1')"
)

_DOI_PREFIXES = (
    "doi:",
    "https://doi.org/",
    "http://doi.org/",
    "https://dx.doi.org/",
    "http://dx.doi.org/",
    "doi.org/",
    "dx.doi.org/",
)
# A PDF added from a file that no source identified: ``local:`` + its SHA-256 (hex).
LOCAL_PREFIX: Final = "local:"
_LOCAL: Final = re.compile(r"[0-9a-f]{64}")
_ARXIV_PREFIXES = (
    "arxiv:",
    "https://arxiv.org/abs/",
    "http://arxiv.org/abs/",
    "https://arxiv.org/pdf/",
    "http://arxiv.org/pdf/",
    "arxiv.org/abs/",
    "arxiv.org/pdf/",
)
# The suffix may hold almost anything (old Wiley DOIs carry '<', '>' and ';'), but
# never white space or control characters.
_DOI = re.compile(r"10\.\d{4,9}/[^\s\x00-\x1f\x7f]+")
_ARXIV_NEW = re.compile(r"(?P<id>\d{4}\.\d{4,5})(?:v(?P<version>[1-9]\d{0,3}))?")
_ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(.+)", re.IGNORECASE)
# "." and ".." path parts: ids become URL paths upstream, where these would move them.
DOT_SEGMENT = re.compile(r"(?:^|[/:])\.{1,2}(?:/|$)")
_ARXIV_OLD = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)*)(?:\.(?P<subject>[a-z]{2}))?/(?P<number>\d{7})"
    r"(?:v(?P<version>[1-9]\d{0,3}))?",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Ref:
    """A normalised reference: a lower-case DOI, an arXiv id (version kept apart), or
    the SHA-256 of a local PDF no source identified (``local:<hex>``)."""

    kind: RefKind
    value: str
    version: int | None = None

    @property
    def canonical(self) -> str:
        """The normalised id as one string (arXiv version included when given)."""
        if self.kind == "arxiv" and self.version is not None:
            return f"{self.value}v{self.version}"
        if self.kind == "local":
            return LOCAL_PREFIX + self.value
        return self.value

    @property
    def safekey(self) -> str:
        """The file-system-safe store key of this ref."""
        return safekey(self)

    def shape(self) -> dict[str, str]:
        """``{"doi": ...}`` or ``{"arxiv": ...}``: the shape tool results give a ref."""
        return {self.kind: self.canonical}

    def __str__(self) -> str:
        return self.canonical


def _invalid(raw: str, why: str) -> DoigetError:
    return DoigetError(
        ErrorCode.INVALID_REF,
        f"{quoted(raw)} is not a reference doiget accepts ({why}). Use {ACCEPTED_FORMS}.",
    )


_INVISIBLE: Final = "it holds a space, control or formatting character"


def _has_invisible(text: str) -> bool:
    """Whether ``text`` holds white space or a control, format (bidi, zero-width),
    private-use or unassigned character: none belongs in an id, and some would make
    the id read differently from what it is."""
    return any(unicodedata.category(ch)[0] in "CZ" for ch in text)


def _strip_prefix(text: str, prefixes: tuple[str, ...]) -> str | None:
    lowered = text.lower()
    for prefix in prefixes:
        if lowered.startswith(prefix):
            return text[len(prefix) :]
    return None


_DOTS: Final = "a DOI has no '.' or '..' path parts"
# Deeper than this, percent-encoding is no id's own but a disguise.
_DECODINGS: Final = 3


def has_dot_segment(value: str) -> bool:
    """Whether ``value`` holds a '.' or '..' path part, as written or percent-decoded
    once or more ('%2e%2e'): in a URL path it would be resolved and move the id."""
    for _ in range(_DECODINGS):
        if DOT_SEGMENT.search(value):
            return True
        decoded = unquote(value)
        if decoded == value:
            return False
        value = decoded
    return True


def url_path(value: str) -> str:
    """An id (a DOI, a ``DOI:``-prefixed paper id) as it goes into an upstream's URL path:
    percent-encoded, its '/' and ':' kept as the APIs expect, and INVALID_REF when it
    holds a '.' or '..' part, which would send the request to another path."""
    if has_dot_segment(value):
        raise _invalid(value, _DOTS)
    return quote(value, safe="/:;()")


def _parse_doi(text: str, raw: str) -> Ref:
    # Resolver URLs may percent-encode the suffix; the bare forms are taken as typed.
    candidate = unquote(text) if "%" in text else text
    if _has_invisible(candidate):
        raise _invalid(raw, _INVISIBLE)
    if not _DOI.fullmatch(candidate):
        raise _invalid(raw, "a DOI is '10.' + 4-9 digits + '/' + a suffix without spaces")
    if has_dot_segment(candidate):
        raise _invalid(raw, _DOTS)
    return Ref("doi", candidate.lower())


def _parse_arxiv(text: str, raw: str) -> Ref:
    candidate = text.removesuffix(".pdf")
    new = _ARXIV_NEW.fullmatch(candidate)
    if new:
        version = new.group("version")
        return Ref("arxiv", new.group("id"), int(version) if version else None)
    old = _ARXIV_OLD.fullmatch(candidate)
    if old:
        archive = old.group("archive").lower()
        subject = old.group("subject")
        prefix = f"{archive}.{subject.upper()}" if subject else archive
        version = old.group("version")
        return Ref("arxiv", f"{prefix}/{old.group('number')}", int(version) if version else None)
    raise _invalid(raw, "an arXiv id is 'YYMM.NNNNN' or 'archive/YYMMNNN', with optional 'vN'")


def parse_ref(raw: str) -> Ref:
    """Parse any accepted form into a :class:`Ref`, or raise ``INVALID_REF``."""
    if not isinstance(raw, str):
        raise DoigetError(ErrorCode.INVALID_REF, f"A ref must be a string; use {ACCEPTED_FORMS}.")
    text = raw.strip()
    if not text:
        raise _invalid(raw, "it is empty")
    if len(text) > MAX_REF_LENGTH:
        raise _invalid(raw, f"it is longer than {MAX_REF_LENGTH} characters")
    if _has_invisible(text):
        raise _invalid(raw, _INVISIBLE)
    doi_rest = _strip_prefix(text, _DOI_PREFIXES)
    if doi_rest is not None:
        return _parse_doi(doi_rest, raw)
    local_rest = _strip_prefix(text, (LOCAL_PREFIX,))
    if local_rest is not None:
        if not _LOCAL.fullmatch(local_rest.lower()):
            raise _invalid(raw, "a local file's ref is 'local:' + the 64 hex digits of its SHA-256")
        return Ref("local", local_rest.lower())
    arxiv_rest = _strip_prefix(text, _ARXIV_PREFIXES)
    if arxiv_rest is not None:
        return _parse_arxiv(arxiv_rest, raw)
    if text.startswith("10."):
        return _parse_doi(text, raw)
    if _ARXIV_NEW.fullmatch(text) or _ARXIV_OLD.fullmatch(text):
        return _parse_arxiv(text, raw)
    raise _invalid(raw, "it is neither a DOI nor an arXiv id")


def _key_id(ref: Ref) -> str:
    """The id a store key is made of (a local ref's key is ``local_<hex>``)."""
    return ref.value if ref.kind == "local" else ref.canonical


def local_ref(sha256: str) -> Ref:
    """The ref of a local PDF no source identified, from its SHA-256 (hex)."""
    return Ref("local", sha256.lower())


def legacy_safekey(ref: Ref) -> str:
    """The plain key of ``ref``: ``doi_``/``arxiv_`` + the id with every character
    outside ``[A-Za-z0-9._-]`` and every run of dots made ``_``, runs of ``_``
    collapsed and trimmed. Distinct ids can share it (``a(b`` and ``a_b``)."""
    body = re.sub(r"[^A-Za-z0-9._-]", "_", _key_id(ref))
    body = re.sub(r"\.{2,}", "_", body)
    body = re.sub(r"_+", "_", body).strip("_")
    return f"{ref.kind}_{body}"


def safekey(ref: Ref) -> str:
    """The store key of ``ref``: unique to it, safe as a file name.

    The plain key (:func:`legacy_safekey`) when it maps back to exactly this id
    (its only change was ``/`` to ``_``); otherwise, and when it is over 192 bytes,
    its first 192 bytes plus ``_`` and 8 hex digits of the SHA-256 of the id, so two
    ids the plain mapping would merge get two keys. Names never come from server
    responses: only from the parsed ref.
    """
    raw_id = _key_id(ref)
    key = legacy_safekey(ref)
    lossless = key.removeprefix(f"{ref.kind}_").replace("_", "/") == raw_id
    if lossless and len(key) <= SAFEKEY_MAX_BYTES:
        return key
    digest = hashlib.sha256(raw_id.encode("utf-8")).hexdigest()[:8]
    return f"{key[:SAFEKEY_MAX_BYTES]}_{digest}"


def arxiv_ref_for(ref: Ref) -> Ref | None:
    """The arXiv ref behind an arXiv DataCite DOI, or the ref itself when it is arXiv."""
    if ref.kind == "arxiv":
        return ref
    match = _ARXIV_DOI.fullmatch(ref.value)
    if match:
        try:
            return parse_ref(match.group(1))
        except DoigetError:
            return None
    return None


def parse_arxiv_id(raw: str) -> Ref:
    """An arXiv ref from any arXiv form (id, ``arXiv:`` id, abs/pdf link, 10.48550 DOI).

    Anything else, a DOI of another registrant included, is ``INVALID_REF``.
    """
    try:
        ref = arxiv_ref_for(parse_ref(raw))
    except DoigetError:
        ref = None
    if ref is None:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"{quoted(raw)} is not an arXiv id; use '2301.12345', '2301.12345v2', "
            "'arXiv:2301.12345', 'hep-th/9901001' or an arxiv.org/abs link.",
        )
    return ref


def fetchable_ref(doi: str | None, arxiv_id: str | None, *, prefer: RefKind = "doi") -> str | None:
    """The ref to hand doiget_fetch_paper for a work, or None when it has neither id.

    arXiv ids (new and old style) lose their version: the tool takes the latest.
    Whatever :func:`parse_ref` refuses is never offered.
    """
    candidates: list[str] = []
    if arxiv_id:
        with contextlib.suppress(DoigetError):
            candidates.append(f"arXiv:{parse_arxiv_id(arxiv_id).value}")
    if doi:
        with contextlib.suppress(DoigetError):
            ref = parse_ref(doi)
            if ref.kind == "doi":
                candidates.insert(0 if prefer == "doi" else len(candidates), ref.value)
    return candidates[0] if candidates else None
