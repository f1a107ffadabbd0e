"""Importing a bibliography: every entry checked against the record, the real works
stored, the user's citation keys kept.

1. The text is read (BibTeX, CSL-JSON or RIS) in the work pool.
2. Every entry is checked by the verification core (:mod:`doiget.verify.service`).
3. Each real work found is stored as ``doiget metadata REF`` stores it (a resolve and a
   store row in the provenance log), unless the library holds it already; the entry's
   own key is kept in ``[doiget.aliases] bib`` (a store row first).
4. The PDFs its ``file`` field names are handed to the adder of local PDFs (command
   line only: over MCP the text comes without a folder, and no path is read); with
   ``fetch``, the works still without a PDF are fetched as one batch.

Every entry of the file is a row: one that cannot be read whole is ``unreadable``
(never checked, never stored), and a key an earlier entry has, or one BibTeX cannot
cite, is not kept (the row says so). A work the library held before is
``already_present`` whatever its entry says; the differences are still listed.

A work that is not found, or whose check or storing failed because a source did not
answer (``uncertain``), is not stored: it is listed with the reason, and the next
import of the same file tries it again. Importing a file twice writes nothing the
second time: its entries are present, their keys kept, and the verification answers
are cached (no upstream request within the cache's 7 days).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, cast

import anyio

from doiget.cite.citekey import citable_key
from doiget.contract import invalid
from doiget.errors import DoigetError, ErrorCode
from doiget.importing import files
from doiget.importing.contracts import (
    FORMAT_NAMES,
    MAX_FILES_PER_ENTRY,
    STATUSES,
    ImportBibliography,
    ImportCounts,
    ImportReport,
    ImportRow,
    PdfOutcome,
    Status,
)
from doiget.papers import contracts as pc
from doiget.papers.service import Papers
from doiget.refs import Ref, parse_ref
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import Row
from doiget.verify.service import Verifier

# (done, total, what just happened); the total grows once the fetches are known.
ImportProgress = Callable[[int, int, str], Awaitable[None] | None]
AddPdf = Callable[[Path], Awaitable[PdfOutcome]]

# Works stored at once: each is a resolve (Crossref and Unpaywall, or arXiv) under the
# papers rate budget, which paces them whatever this allows.
CONCURRENT_STORES: Final = 5
_RIS: Final = re.compile(r"^TY  - ", re.MULTILINE)
# Blanks within the line only: ``\s*`` after ``^`` would rescan every following blank
# line from each line start (quadratic over a text of newlines).
_BIBTEX: Final = re.compile(r"^[ \t\ufeff]*@\w+[ \t]*[{(]", re.MULTILINE)
_NOT_STORED: Final = frozenset({"not_found", "uncertain", "no_identifier"})
# Failures that stop the import: nothing more may happen unrecorded or unwritten.
_FATAL: Final = frozenset({ErrorCode.LOG_ERROR})


def format_name(text: str, chosen: str) -> str:
    """The file name the readers should take ``text`` for: by the format chosen, or
    told from its content. INVALID_REF when it is none of BibTeX, CSL-JSON and RIS."""
    if chosen != "auto":
        return FORMAT_NAMES[chosen]
    if _RIS.search(text):
        return FORMAT_NAMES["ris"]
    if text.lstrip()[:1] in ("[", "{"):
        return FORMAT_NAMES["csl-json"]
    if _BIBTEX.search(text):
        return FORMAT_NAMES["bibtex"]
    raise invalid(
        "the text is not a BibTeX, CSL-JSON or RIS export; export the library from the "
        "citation manager in one of those formats (or say which with format).",
        "text",
    )


def _read(text: str, chosen: str) -> list[CitedWork]:
    from doiget.verify.inputs import read_text

    works = read_text(text, format_name(text, chosen))
    if not works:
        raise invalid(
            "no entry found in the text; pass a BibTeX, CSL-JSON or RIS export as it is.",
            "text",
        )
    return works


async def store_work(papers: Papers, ref: Ref, aliases: Sequence[tuple[str, str]] = ()) -> bool:
    """Store the real work ``ref`` as ``doiget metadata REF`` stores it (a resolve and a
    store row) unless the library holds it, then keep its ``(kind, key)`` aliases (a
    store row each that is new); True when the work was stored just now."""
    present = await anyio.to_thread.run_sync(papers.store.entry, ref)
    if present is None:
        await papers.metadata_only(pc.PaperFetch(ref=ref.canonical))
    for kind, key in dict.fromkeys(aliases):
        await papers.add_alias(ref, kind, key)
    return present is None


@dataclass(frozen=True, slots=True)
class _Key:
    """An entry's key as written, the key kept for its work (None when none is), and
    why it is not kept when it is not."""

    written: str | None
    kept: str | None = None
    said: str | None = None


def _where(cited: CitedWork, position: int) -> str:
    """Where an entry is in its file: its line (BibTeX), else its place."""
    return f"the entry at line {cited.line}" if cited.line else f"entry {position + 1}"


def _keys(cited: Sequence[CitedWork]) -> list[_Key]:
    """Each entry's key and whether it is kept: a key BibTeX cannot cite is not, nor is
    a key an earlier entry already has (BibTeX tells keys apart regardless of case, so
    ``Smith2020`` repeats ``smith2020``); ``said`` tells the entry why."""
    first: dict[str, int] = {}
    keys = []
    for position, work in enumerate(cited):
        written = work.key
        if not written:
            keys.append(_Key(written))
            continue
        if citable_key(written) is None:
            said = f"its key {written!r} is not kept: BibTeX cannot cite it"
            keys.append(_Key(written, said=said))
            continue
        earlier = first.setdefault(written.casefold(), position)
        if earlier != position:
            said = (
                f"its key {written!r} is not kept: {_where(cited[earlier], earlier)} has "
                "that key already (keys are told apart regardless of case)"
            )
            keys.append(_Key(written, said=said))
            continue
        keys.append(_Key(written, written))
    return keys


@dataclass
class _Steps:
    """Progress over the three phases: checks, stores, then fetches."""

    report: ImportProgress | None
    total: int
    done: int = 0

    async def step(self, message: str) -> None:
        self.done += 1
        if self.report is not None:
            reported = self.report(self.done, self.total, message)
            if reported is not None:
                await reported


@dataclass
class _Work:
    """One real work of the bibliography: its ref, the entries that cite it, the keys
    they give it, and what storing it did."""

    ref: Ref
    positions: list[int] = field(default_factory=list)
    new: bool = False
    failure: DoigetError | None = None


class Importer:
    """Imports bibliographies through one process's papers core and verifier."""

    def __init__(self, papers: Papers, verifier: Verifier, add_pdf: AddPdf | None = None):
        self._papers = papers
        self._verifier = verifier
        self._add_pdf = add_pdf or self._through_adder

    async def _through_adder(self, path: Path) -> PdfOutcome:
        from doiget.papers.adding import PdfAdder

        return await files.add_pdf(PdfAdder(self._papers, self._verifier), path)

    async def run(
        self,
        request: ImportBibliography,
        *,
        folder: Path | None = None,
        progress: ImportProgress | None = None,
    ) -> ImportReport:
        """Import the bibliography of ``request``; ``folder`` is where its file lies
        (relative ``file`` paths are read from there), None when no path may be read."""
        pool = self._papers.runtime.pool("papers")
        cited = await pool.run(functools.partial(_read, request.text, request.format))
        readable = [index for index, work in enumerate(cited) if work.unreadable is None]
        steps = _Steps(progress, 2 * len(readable))

        async def checked(done: int, total: int, row: Row) -> None:
            await steps.step(f"checked {row.key or done}: {row.verdict}")

        verified = await self._verifier.verify_many([cited[i] for i in readable], checked)
        rows: list[Row | None] = [None] * len(cited)
        for index, row in zip(readable, verified.results, strict=True):
            rows[index] = row
        keys = _keys(cited)
        works = self._works(rows)
        await self._store(works, keys, rows, steps)
        results = [
            self._row(index, work, row, works, keys[index])
            for index, (work, row) in enumerate(zip(cited, rows, strict=True))
        ]
        await self._add_files(results, cited, folder)
        if request.fetch:
            await self._fetch(results, steps)
        counts = {status: sum(row.status == status for row in results) for status in STATUSES}
        return ImportReport(
            ok=True, total=len(results), counts=ImportCounts(**counts), results=results
        )

    @staticmethod
    def _works(rows: Sequence[Row | None]) -> dict[str, _Work]:
        """The real works the rows found, each once, with the rows that cite it."""
        works: dict[str, _Work] = {}
        for position, row in enumerate(rows):
            if row and row.verdict in ("verified", "miscited") and row.match and row.match.ref:
                ref = parse_ref(row.match.ref)
                works.setdefault(ref.canonical, _Work(ref)).positions.append(position)
        return works

    async def _store(
        self,
        works: dict[str, _Work],
        keys: Sequence[_Key],
        rows: Sequence[Row | None],
        steps: _Steps,
    ) -> None:
        limit = anyio.CapacityLimiter(CONCURRENT_STORES)
        fatal: list[DoigetError] = []

        async def store(work: _Work) -> None:
            async with limit:
                try:
                    await self._store_work(work, [keys[i].kept for i in work.positions])
                except DoigetError as error:
                    if error.code in _FATAL:
                        fatal.append(error)
                        group.cancel_scope.cancel()
                        return
                    work.failure = error
            for position in work.positions:
                await steps.step(f"stored {keys[position].written or position + 1}")

        async with anyio.create_task_group() as group:
            for work in works.values():
                group.start_soon(store, work)
        if fatal:
            raise fatal[0]
        stored = sum(len(work.positions) for work in works.values())
        for _ in range(sum(row is not None for row in rows) - stored):  # nothing to store
            await steps.step("nothing to store")

    async def _store_work(self, work: _Work, keys: Sequence[str | None]) -> None:
        """Store the work unless the library holds it, then keep the entries' keys."""
        aliases = [("bib", key) for key in filter(None, keys)]
        work.new = await store_work(self._papers, work.ref, aliases)

    @staticmethod
    def _row(
        position: int, cited: CitedWork, row: Row | None, works: dict[str, _Work], key: _Key
    ) -> ImportRow:
        """What happened to one entry."""
        if row is None:
            return ImportRow(
                key=cited.key,
                status="unreadable",
                title=cited.title,
                note=f"{_where(cited, position)} cannot be read: {cited.unreadable}; fix the "
                "entry (in the citation manager, or the file) and import again.",
            )
        match = row.match
        ref = parse_ref(match.ref) if match and match.ref else None
        work = works.get(ref.canonical) if ref else None
        title = (match.title if match else None) or cited.title
        problems = row.problems or None
        status: Status
        note = row.note
        if row.verdict in ("not_found", "uncertain"):
            status = row.verdict
        elif work is None:
            status = "no_identifier"
            note = "the record has no DOI or arXiv id, which the library files works by"
        elif work.failure is not None:
            status = "uncertain"
            note = f"not stored: {work.failure.message}"
        elif work.new and (row.verdict == "miscited" or work.positions[0] == position):
            status = "corrected" if row.verdict == "miscited" else "imported"
        else:  # stored before, by an earlier import or an earlier entry: nothing written
            status = "already_present"
        stored = status not in _NOT_STORED
        if stored and key.said:
            note = "; ".join(filter(None, (note, key.said)))
        return ImportRow(
            key=cited.key,
            status=status,
            ref=ref.canonical if ref and stored else None,
            title=title,
            alias=key.kept if stored else None,
            problems=problems,
            note=note,
        )

    async def _add_files(
        self, results: list[ImportRow], cited: Sequence[CitedWork], folder: Path | None
    ) -> None:
        """Hand the PDFs the stored entries' file fields name to the adder."""
        for result, work in zip(results, cited, strict=True):
            if result.ref is None or not work.files:
                continue
            listed = list(dict.fromkeys(work.files))
            outcomes = []
            for written in listed[:MAX_FILES_PER_ENTRY]:
                if folder is None:
                    outcomes.append(
                        PdfOutcome(
                            source="file",
                            ok=False,
                            message=f"{written} not read: over MCP no local path is; "
                            "run `doiget import` on the file to add its PDFs.",
                        )
                    )
                    continue
                path = await anyio.to_thread.run_sync(files.locate, written, folder)
                outcomes.append(
                    files.missing(written) if path is None else await self._add_pdf(path)
                )
            if len(listed) > MAX_FILES_PER_ENTRY:
                outcomes.append(files.too_many(len(listed) - MAX_FILES_PER_ENTRY))
            result.pdf = outcomes

    async def _fetch(self, results: list[ImportRow], steps: _Steps) -> None:
        """Fetch the Open Access PDFs of the stored works that have none, as one batch."""
        papers = self._papers
        wanted: dict[str, list[ImportRow]] = {}
        for result in results:
            if result.ref is None or any(outcome.ok for outcome in result.pdf or []):
                continue
            entry = await anyio.to_thread.run_sync(papers.store.entry, parse_ref(result.ref))
            if entry is not None and entry.has_pdf:
                stored = PdfOutcome(source="store", ok=True, path=str(entry.pdf_path))
                result.pdf = [*(result.pdf or []), stored]
                continue
            wanted.setdefault(result.ref, []).append(result)
        if not wanted:
            return
        steps.total += len(wanted)

        async def fetched(done: int, total: int, row: pc.BatchRow) -> None:
            await steps.step(f"fetched {row.ref}: {'ok' if row.ok else 'no PDF'}")

        batch = await papers.batch(pc.BatchFetch(refs=list(wanted)), progress=fetched)
        for row in cast("pc.BatchFetched", batch).results or []:
            error = row.error
            outcome = PdfOutcome(
                source="open_access",
                ok=row.ok,
                path=row.path,
                code=error.code if error else None,
                message=error.message if error else None,
            )
            for result in wanted[str(row.ref)]:
                result.pdf = [*(result.pdf or []), outcome]
