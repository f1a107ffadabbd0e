"""The cited work's text a claim is weighed against, and why it is that text.

In this order: the stored paper's full text (its PDF); the Open Access PDF fetched into
the store, when the caller allows a fetch; the abstract of the metadata record (the
stored entry's, else Crossref's JATS abstract, arXiv's summary, PubMed's abstract, and
OpenAlex's or Semantic Scholar's when the capability profile enables them). A work
with none of these is ``unavailable``, and the note says why: no Open Access copy, no
abstract in the record, a source that failed. Nothing here guesses.

Lookups go through the verifier's questions (its network, so the process's rate
budget, and its kept answers): for an abstract at most four requests a work (the record
by the work's id, PubMed's by its PMID, one title search per opt-in index).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import anyio

from doiget.claims.contracts import Basis
from doiget.errors import DoigetError
from doiget.models import Work
from doiget.papers.store import STORE_KEY, Entry, Store
from doiget.refs import Ref, arxiv_ref_for, parse_ref
from doiget.verify.contracts import Row
from doiget.verify.lookup import Lookups
from doiget.verify.service import Verifier

_VERSION: Final = re.compile(r"v\d+$")

Fetch = Callable[[Ref], Awaitable[object]]
Offload = Callable[[Callable[[], Any]], Awaitable[Any]]
OfRef = Callable[[Ref, str | None], Awaitable["Source"]]


@dataclass(frozen=True, slots=True)
class Source:
    """What a claim is weighed against: a stored PDF (``pdf``), a text (``text``: an
    abstract or the caller's), or nothing, with ``note`` saying why."""

    basis: Basis
    ref: str | None = None
    note: str | None = None
    pdf: Path | None = None
    text: str | None = None
    verification: Row | None = None


def _joined(*notes: str | None) -> str | None:
    kept = [note for note in notes if note]
    return "; ".join(kept) if kept else None


class Bases:
    """Finds the text of cited works: the store first, then the record."""

    def __init__(self, store: Store, verifier: Verifier, fetch: Fetch | None = None) -> None:
        self._store = store
        self._verifier = verifier
        self._fetch = fetch

    async def of_name(self, name: str, *, fetch: bool) -> Source:
        """The text of the work a ref (DOI, arXiv id) or a store key names."""
        label, entry = await anyio.to_thread.run_sync(self._store.entry_named, name)
        if entry is not None:
            return await self.of_ref(entry.ref, fetch=fetch)
        if STORE_KEY.fullmatch(label):
            note = f"no stored paper has the key {label}; cite the work by its DOI or arXiv id"
            return Source("unavailable", label, note=note)
        return await self.of_ref(parse_ref(label), fetch=fetch)

    async def of_ref(self, ref: Ref, *, fetch: bool, pmid: str | None = None) -> Source:
        """The text of the work ``ref`` names (``pmid``: its PubMed id, when cited)."""
        name = ref.canonical
        entry = await anyio.to_thread.run_sync(self._store.entry, ref)
        if entry is not None and entry.has_pdf:
            return Source("full_text", name, pdf=entry.pdf_path)
        why_not_full = "no stored PDF; with fetch its Open Access copy would be looked for"
        if fetch and self._fetch is not None and ref.kind != "local":
            try:
                await self._fetch(ref)
            except DoigetError as error:
                why_not_full = f"no PDF fetched: {error.message}"
            else:
                fetched = await anyio.to_thread.run_sync(self._store.entry, ref)
                if fetched is not None and fetched.has_pdf:
                    note = "its Open Access PDF was fetched into the store"
                    return Source("full_text", name, note=note, pdf=fetched.pdf_path)
            entry = await anyio.to_thread.run_sync(self._store.entry, ref)
        return await self._abstract_of(ref, entry, why_not_full, pmid)

    async def unreadable(self, source: Source) -> Source:
        """In place of ``source``, a stored PDF with no text to read (a scan): the
        work's abstract, or why there is none."""
        ref = parse_ref(source.ref or "")
        entry = await anyio.to_thread.run_sync(self._store.entry, ref)
        found = await self._abstract_of(ref, entry, "the stored PDF has no text layer", None)
        return replace(found, verification=source.verification)

    async def _abstract_of(
        self, ref: Ref, entry: Entry | None, why_not_full: str, pmid: str | None
    ) -> Source:
        """The stored entry's abstract, else the record's; ``why_not_full`` says why
        the full text is not the basis."""
        name = ref.canonical
        if entry is not None and entry.work.abstract:
            return Source("abstract", name, note=why_not_full, text=entry.work.abstract)
        found, why_no_abstract = await self.abstract(ref, pmid)
        if found is None:
            return Source("unavailable", name, note=_joined(why_not_full, why_no_abstract))
        return Source("abstract", name, note=why_not_full, text=found)

    async def abstract(self, ref: Ref | None, pmid: str | None) -> tuple[str | None, str]:
        """The abstract of the record of ``ref`` (or of ``pmid``), or why there is none."""
        if ref is not None and ref.kind == "local":
            return None, "no record to ask: the stored PDF was never identified"
        lookups = self._verifier.lookups()
        record: Work | None = None
        asked: list[str] = []
        arxiv = arxiv_ref_for(ref) if ref is not None else None
        if arxiv is not None:
            asked.append("arXiv")
            record = (await lookups.arxiv_id(arxiv.canonical))[1]
        elif ref is not None:
            asked.append("Crossref")
            record = (await lookups.crossref_doi(ref.value))[1]
        if record is not None and record.abstract:
            return record.abstract, ""
        pmid = pmid or (record.pmid if record is not None else None)
        if pmid:
            asked.append("PubMed")
            found = await lookups.pubmed_records([pmid])
            if found and found[0].abstract:
                return found[0].abstract, ""
        title = record.title if record is not None else None
        if title and ref is not None:
            for index in self._verifier.indexes:
                asked.append(index)
                found = await lookups.index_search(index, title)
                same = [work for work in found if _same_id(work, ref) and work.abstract]
                if same:
                    return same[0].abstract, ""
        return None, _no_abstract(ref, asked, lookups)

    async def of_reference(
        self, reference: str | Mapping[str, Any], *, offload: Offload, of_ref: OfRef
    ) -> Source:
        """The text of the work a BibTeX entry, free-text or CSL-JSON reference cites,
        found by the verifier (its row is kept as the source's ``verification``), then
        by ``of_ref(its ref, the cited PMID)``."""
        from doiget.verify.inputs import read_items

        [cited] = await offload(lambda: read_items([reference]))
        row = await self._verifier.verify(cited)
        matched = row.match.ref if row.match is not None else None
        if matched:
            source = await of_ref(parse_ref(matched), cited.pmid)
            return replace(source, verification=row)
        if row.verdict == "not_found":
            note = "no real work matches the reference (see verification)"
        elif row.match is None:
            note = f"the cited work could not be identified: {row.note or row.verdict}"
        elif cited.pmid:
            text, why = await self.abstract(None, cited.pmid)
            if text is not None:
                return Source("abstract", None, text=text, verification=row)
            note = why
        else:
            note = "the matched work has no DOI or arXiv id to find its text by"
        return Source("unavailable", None, note=note, verification=row)


def _same_id(work: Work, ref: Ref) -> bool:
    if ref.kind == "doi":
        return (work.doi or "").lower() == ref.value
    return _VERSION.sub("", work.arxiv_id or "") == ref.value


def _no_abstract(ref: Ref | None, asked: list[str], lookups: Lookups) -> str:
    """Why no abstract was found: the sources that failed, else those that have none."""
    if lookups.failures:
        failed = "; ".join(f"{source} failed ({why})" for source, why in lookups.failures.items())
        return f"no abstract found, but {failed}; try again later"
    where = ", ".join(asked) or "no source"
    return f"no abstract in the record of {ref or 'the work'} ({where} asked)"
