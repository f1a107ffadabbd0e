"""arXiv: the Atom feed of the export API (``/api/query?id_list=``).

A feed with no entry means the id is unknown (NOT_FOUND); arXiv reports a malformed
id as an entry titled "Error" whose id points at ``/api/errors`` (INVALID_REF).
"""

from __future__ import annotations

import re
from typing import Final

from lxml import etree

from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources.names import author_from_name
from doiget.sources.shape import ShapeError, bare_doi, parse_or_drift, text

API_URL: Final = "https://export.arxiv.org/api/query"
PDF_BASE: Final = "https://arxiv.org/pdf/"
_NS: Final = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
_ABS_ID: Final = re.compile(r"arxiv\.org/abs/(.+)$")
_PARSER: Final = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def pdf_url_for(arxiv_id: str) -> str:
    """The canonical PDF URL of an arXiv id (with or without version)."""
    return PDF_BASE + arxiv_id


def _child_text(entry: etree._Element, path: str) -> str | None:
    found = entry.find(path, _NS)
    return text(found.text) if found is not None else None


def _entry_work(entry: etree._Element) -> Work:
    raw_id = _child_text(entry, "atom:id") or ""
    match = _ABS_ID.search(raw_id)
    if not match:
        raise ShapeError(f"returned an entry whose id {raw_id[:80]!r} is not an abs URL")
    arxiv_id = match.group(1)
    authors = tuple(
        author_from_name(name)
        for name in (_child_text(node, "atom:name") for node in entry.findall("atom:author", _NS))
        if name
    )
    pdf_url = None
    for link in entry.findall("atom:link", _NS):
        if link.get("title") == "pdf" or link.get("type") == "application/pdf":
            pdf_url = link.get("href")
            break
    primary = entry.find("arxiv:primary_category", _NS)
    published = _child_text(entry, "atom:published")
    doi = bare_doi(_child_text(entry, "arxiv:doi"))
    return Work(
        source="arxiv",
        title=_child_text(entry, "atom:title"),
        authors=authors,
        year=int(published[:4]) if published and published[:4].isdigit() else None,
        issued=published[:10] if published else None,
        doi=doi,
        arxiv_id=arxiv_id,
        abstract=_child_text(entry, "atom:summary"),
        venue=None,
        type="article",
        url=f"https://arxiv.org/abs/{arxiv_id}",
        pdf_url=pdf_url.replace("http://", "https://", 1) if pdf_url else pdf_url_for(arxiv_id),
        categories=tuple(
            term for node in entry.findall("atom:category", _NS) if (term := node.get("term"))
        ),
        primary_category=primary.get("term") if primary is not None else None,
        journal_ref=_child_text(entry, "arxiv:journal_ref"),
        published=published,
        updated=_child_text(entry, "atom:updated"),
        publisher="arXiv",
    )


def parse_feed(body: bytes) -> list[Work]:
    """Every work in an arXiv Atom feed. Raises INVALID_REF for arXiv's error entries."""
    try:
        root = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise ShapeError(f"returned a feed that is not XML ({exc})") from exc
    if root.tag != f"{{{_NS['atom']}}}feed":
        raise ShapeError("returned XML that is not an Atom feed")
    works = []
    for entry in root.findall("atom:entry", _NS):
        entry_id = _child_text(entry, "atom:id") or ""
        if "/api/errors" in entry_id:
            message = _child_text(entry, "atom:summary") or "the id was refused"
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"arXiv refused the id: {message}. Use e.g. 2401.12345 or hep-th/9901001.",
            )
        works.append(_entry_work(entry))
    return works


async def get_work(client: SourceClient, arxiv_id: str) -> Work:
    """The arXiv record of one id; NOT_FOUND when arXiv has none."""
    fetched = await client.get(
        API_URL, params={"id_list": arxiv_id, "max_results": 1}, accept_status=(400,)
    )
    works = parse_or_drift(client, parse_feed, fetched.content)
    if fetched.status == 400 and not works:
        raise DoigetError(ErrorCode.INVALID_REF, f"arXiv refused the id {arxiv_id!r}.")
    if not works:
        raise DoigetError(
            ErrorCode.NOT_FOUND, f"arXiv has no paper {arxiv_id}; check the id and version."
        )
    return works[0]
