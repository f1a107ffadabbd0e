"""Whether a Zotero item is a given work: the same DOI, the same arXiv id, or (neither
known on both sides) the same title once case, accents and punctuation are set aside.
A DOI is compared as doiget reads one: a doi.org link or a ``doi:`` prefix is the DOI.

Zotero keeps a DOI in the ``DOI`` field where the item type has one and as a ``DOI: …``
line of ``extra`` elsewhere; an arXiv id as a preprint's ``archiveID``, an ``arXiv: …``
line of ``extra``, or in an arxiv.org ``url``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Final

from doiget.errors import DoigetError
from doiget.refs import parse_ref

_EXTRA_LINE: Final = re.compile(r"^\s*(DOI|arXiv)\s*:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_ARXIV_URL: Final = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s?#]+?)(?:v\d+)?(?:\.pdf)?$", re.I)
_ARXIV_VERSION: Final = re.compile(r"v\d+$")


def title_key(title: str | None) -> str:
    """A title with case, accents, punctuation and spacing set aside."""
    folded = unicodedata.normalize("NFKD", title or "").casefold()
    return "".join(char for char in folded if char.isalnum())


def _doi(value: str) -> str:
    """A DOI however it was pasted (a doi.org link, a ``doi:`` prefix), lower-cased."""
    try:
        ref = parse_ref(value)
    except DoigetError:
        return value.strip().lower()
    return ref.value if ref.kind == "doi" else value.strip().lower()


def _arxiv(value: str) -> str:
    value = value.strip().removeprefix("arXiv:").removeprefix("arxiv:")
    return _ARXIV_VERSION.sub("", value).lower()


@dataclass(frozen=True, slots=True)
class Identity:
    """What tells one work from another."""

    doi: str | None
    arxiv_id: str | None
    title: str

    @classmethod
    def of_item(cls, data: dict[str, Any]) -> Identity:
        """The identity a Zotero item's fields give."""
        doi = str(data.get("DOI") or "").strip() or None
        arxiv = None
        archive = str(data.get("archiveID") or "")
        if archive.lower().startswith("arxiv:"):
            arxiv = _arxiv(archive)
        for name, value in _EXTRA_LINE.findall(str(data.get("extra") or "")):
            if name.lower() == "doi":
                doi = doi or value
            else:
                arxiv = arxiv or _arxiv(value)
        url = _ARXIV_URL.search(str(data.get("url") or ""))
        if url is not None:
            arxiv = arxiv or _arxiv(url.group(1))
        return cls(_doi(doi) if doi else None, arxiv, title_key(data.get("title")))

    def same(self, other: Identity) -> bool:
        """Whether both are one work: an identifier both know decides, else the title."""
        if self.doi and other.doi:
            return self.doi == other.doi
        if self.arxiv_id and other.arxiv_id:
            return self.arxiv_id == other.arxiv_id
        return bool(self.title) and self.title == other.title
