"""Which PDFs to index: stored papers (by ref, or all of them) or PDF files on disk.

A stored paper's chunks carry its store metadata: the citekey (the key BibTeX export
gives it: the user's own when a bibliography was imported for it), DOI, title,
authors, year, any ``tags`` list in its TOML and the tags of the Zotero item it was
synced from, and where its PDF came from (a file
named on disk is a local file). A ref that is not stored, or is
stored without a PDF, is reported rather than indexed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from doiget.cite.citekey import citekey
from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import DocumentReport
from doiget.library.ingest import SourceDocument
from doiget.papers.origin import pdf_origin
from doiget.papers.store import Entry, Store
from doiget.refs import parse_ref


@dataclass
class Selection:
    """Documents to index, and the refs or files that cannot be."""

    documents: list[SourceDocument] = field(default_factory=list)
    problems: list[DocumentReport] = field(default_factory=list)


# The tags a synced Zotero item has, kept in the entry's ``[doiget]`` table.
ZOTERO_TAGS = "zotero_tags"


def _listed(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def from_entry(entry: Entry) -> SourceDocument:
    """The document of a stored paper with a PDF."""
    work = entry.work
    meta = entry.document.get("doiget")
    tags = [
        *_listed(entry.document.get("tags")),
        *_listed(meta.get(ZOTERO_TAGS) if isinstance(meta, dict) else None),
    ]
    return SourceDocument(
        doc_id=str(entry.ref),
        path=entry.pdf_path,
        store_root=entry.pdf_path.parent,
        title=work.title,
        citekey=entry.bib_key or citekey(work),
        doi=work.doi,
        url=work.url,
        authors=tuple(author.display for author in work.authors),
        year=work.year,
        tags=tuple(dict.fromkeys(str(tag) for tag in tags)),
        origin=plain(pdf_origin(entry)),
    )


def from_file(path: Path) -> SourceDocument:
    """A PDF file outside the store: its path is its identity, its name its title."""
    resolved = path.expanduser().resolve()
    return SourceDocument(
        doc_id=f"file:{resolved}",
        path=resolved,
        title=resolved.stem,
        origin={"kind": "local_file"},
    )


def _add_entry(selection: Selection, label: str, entry: Entry | None, *, named: bool) -> None:
    """Select ``entry``'s PDF, or report why not (a paper without one only when ``named``)."""
    if entry is None:
        selection.problems.append(
            DocumentReport.skipped(
                label,
                "not_stored",
                f"{label} is not in the library; fetch it first with doiget_fetch_paper.",
            )
        )
        return
    try:
        entry.pdf_size()
    except DoigetError as error:
        if error.code is not ErrorCode.NOT_FOUND:
            selection.problems.append(DocumentReport.skipped(label, "unreadable", error.message))
        elif named:
            selection.problems.append(
                DocumentReport.skipped(
                    label,
                    "no_pdf",
                    f"{label} is stored without a PDF (metadata only), so there is no text "
                    "to index; fetch its PDF with doiget_fetch_paper (it needs an Open Access "
                    "copy) or add your own copy with doiget_add_pdf, then index it again.",
                )
            )
        return
    selection.documents.append(from_entry(entry))


def select(
    store: Store, refs: Sequence[str] = (), files: Iterable[Path] = (), everything: bool = False
) -> Selection:
    """The documents named by ``refs``/``files``, or every stored paper with a PDF."""
    selection = Selection()
    if everything:
        for entry in store.entries():
            _add_entry(selection, str(entry.ref), entry, named=False)
    for raw in refs:
        try:
            ref = parse_ref(raw)
        except DoigetError as error:
            selection.problems.append(DocumentReport.skipped(raw, "invalid_ref", error.message))
            continue
        try:
            stored = store.entry(ref)
        except DoigetError as error:
            selection.problems.append(DocumentReport.skipped(str(ref), "unreadable", error.message))
            continue
        _add_entry(selection, str(ref), stored, named=True)
    for path in files:
        if path.is_file():
            selection.documents.append(from_file(path))
        else:
            selection.problems.append(
                DocumentReport.skipped(str(path), "not_found", f"no file at {path}")
            )
    return selection
