"""A Zotero library into doiget's library, incrementally.

1. What changed since the last sync: the keys and versions listed since the library
   version it reached (the Web API's ``since=``; the local app lists every key, and
   the keys no longer listed are the deleted ones), then what was deleted
   (``/deleted?since=``). A library unchanged since is one request, and nothing is
   written.
2. The changed items are read 50 at a time; each regular item's CSL-JSON is checked by
   the verifier; a real work is stored as an imported bibliography's works are (a
   resolve and a store row), known also by its Zotero key (alias ``zotero``:
   ``<library>:<KEY>``) and the researcher's citation key (alias ``bib``: Zotero's
   ``citationKey`` field, else Better BibTeX's ``Citation Key:`` line in ``extra``), its
   tags kept for the passages' ``zotero.tags``.
3. Its PDF attachments go through the adder of local PDFs as the checked work's PDF
   (content-addressed: a file the store holds is never stored twice). An item no source
   identifies is stored only through its PDF, which the adder identifies from its
   content when it can; without a PDF it is listed as not identified, and not checked
   again until it changes.
4. A deleted item loses its ``zotero`` alias: the doiget entry and its PDF are kept.
5. The PDFs stored or re-tagged are indexed for passage search.

The state (:mod:`.syncstate`) is saved after every batch; the library version moves
on only when every changed item was dealt with, so a sync cut short (cancelled, Zotero
gone mid-way) or with items that failed goes on where it stopped the next time.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

import anyio

from doiget.cite.citekey import citable_key
from doiget.errors import DoigetError, ErrorCode
from doiget.importing.service import store_work
from doiget.library.documents import ZOTERO_TAGS, from_entry
from doiget.library.projects import DEFAULT_PROJECT_ID
from doiget.papers.added import AddResult
from doiget.papers.adding import PdfAdder
from doiget.papers.identify import Identification
from doiget.papers.service import Papers
from doiget.refs import Ref, parse_ref
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import Row
from doiget.verify.readers import read_csl
from doiget.verify.service import Verifier
from doiget.zotero import syncstate
from doiget.zotero.api import MAX_WRITE_OBJECTS, ZoteroApi, open_api
from doiget.zotero.browse import citation_key as written_key
from doiget.zotero.browse import item_tags
from doiget.zotero.models import Collection, ZoteroItem
from doiget.zotero.sync_contracts import (
    STATUSES,
    SyncCounts,
    SyncRow,
    ZoteroSyncReport,
)
from doiget.zotero.syncstate import ItemState, SyncState

if TYPE_CHECKING:
    from doiget.library.service import Library

T = TypeVar("T")
# (done, total, what just happened) over the items to store.
SyncProgress = Callable[[int, int, str], Awaitable[None] | None]

# Items read in one request (``itemKey=`` takes at most 50).
READ_BATCH: Final = MAX_WRITE_OBJECTS
# Items checked and stored between two saves of the state.
STORE_BATCH: Final = 25
PDF_TYPE: Final = "application/pdf"
_EXTRA_DOI: Final = re.compile(r"^\s*DOI:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_STORED: Final = frozenset({"verified", "miscited"})
# Failures that stop the sync: nothing more may happen unrecorded or unwritten.
_FATAL: Final = frozenset({ErrorCode.LOG_ERROR})


class _ZoteroStopped(Exception):
    """Zotero did not answer a request: the sync stops and goes on next time."""

    def __init__(self, error: DoigetError) -> None:
        super().__init__(error.message)
        self.error = error


def citation_key(item: ZoteroItem) -> str | None:
    """The researcher's citation key (:func:`~doiget.zotero.browse.citation_key`); None
    when it is not one BibTeX cites."""
    written = written_key(item.data)
    return citable_key(written) if written else None


def cited_work(item: ZoteroItem) -> CitedWork:
    """What the item says of its work, as the verifier reads a reference: its CSL-JSON,
    with a DOI or arXiv id Zotero keeps only in ``extra`` or ``archiveID``."""
    csl = dict(item.csl or {})
    csl.setdefault("title", item.title)
    csl.setdefault("DOI", item.data.get("DOI") or _in_extra(_EXTRA_DOI, item))
    archive = str(item.data.get("archiveID") or "")
    if archive.lower().startswith("arxiv:") and not csl.get("number"):
        csl.update(number=archive, publisher="arXiv")
    cited = read_csl({name: value for name, value in csl.items() if value})
    return dataclasses.replace(cited, key=item.key)


def _in_extra(pattern: re.Pattern[str], item: ZoteroItem) -> str | None:
    found = pattern.search(str(item.data.get("extra") or ""))
    return found.group(1) if found else None


def is_pdf(item: ZoteroItem) -> bool:
    """A PDF attachment (stored in Zotero, or a linked file) rather than a link."""
    return (
        item.item_type == "attachment"
        and item.data.get("contentType") == PDF_TYPE
        and item.data.get("linkMode") != "linked_url"
    )


def collection_scope(collections: Sequence[Collection], name: str) -> tuple[str, set[str]]:
    """The key of the collection ``name`` (a name, or a path ``A/B`` from a top-level
    collection), and the keys of it and the collections inside it. NOT_FOUND names the
    close ones."""
    by_key = {collection.key: collection for collection in collections}

    def path(collection: Collection) -> str:
        parts = [collection.name]
        seen = {collection.key}
        while collection.parent in by_key and collection.parent not in seen:
            collection = by_key[collection.parent]
            seen.add(collection.key)
            parts.append(collection.name)
        return "/".join(reversed(parts))

    wanted = name.strip().strip("/").casefold()
    matched = [c for c in collections if wanted in (path(c).casefold(), c.name.casefold())]
    if len(matched) != 1:
        paths = sorted(path(collection) for collection in collections)
        if matched:
            listed = ", ".join(sorted(path(collection) for collection in matched))
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"{len(matched)} Zotero collections are named {name!r} ({listed}); name one "
                "by its path.",
            )
        close = difflib.get_close_matches(name, paths, n=5, cutoff=0.5) or paths[:10]
        hint = f"close names: {', '.join(close)}" if close else "the library has no collection"
        raise DoigetError(
            ErrorCode.NOT_FOUND,
            f"no Zotero collection is named {name!r} ({hint}); name one as Zotero shows it, "
            "a nested one as 'Parent/Child'.",
        )
    scope = {matched[0].key}
    grew = True
    while grew:
        inside = {c.key for c in collections if c.parent in scope} - scope
        scope |= inside
        grew = bool(inside)
    return matched[0].key, scope


def _title(unit: _Unit) -> str | None:
    """The unit's title as Zotero shows it: its item's, else its PDF's."""
    shown = unit.item or (unit.pdfs[0] if unit.pdfs else None)
    return (shown.title or None) if shown else None


def _version(run: _Run, unit: _Unit) -> int:
    """The version to record for a unit without a changed item."""
    known = run.state.items.get(unit.key)
    if known is not None:
        return known.version
    return unit.pdfs[0].version if unit.pdfs else 0


def _chunks(values: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


@dataclass
class _Unit:
    """One regular item to store (``item`` None: it did not change, only its PDFs
    did), or one PDF attached to no item (``orphan``: ``pdfs`` holds it alone)."""

    key: str
    item: ZoteroItem | None
    pdfs: list[ZoteroItem] = field(default_factory=list)
    orphan: bool = False


@dataclass
class _Run:
    """What one sync has done so far."""

    state: SyncState
    path: Path
    requests: int = 0
    rows: list[SyncRow] = field(default_factory=list)
    pdfs_added: int = 0
    touched: set[str] = field(default_factory=set)  # refs whose PDF to index
    dirty: bool = False
    unindexed: str | None = None  # why the PDFs stored could not be indexed


class ZoteroSync:
    """Syncs one Zotero library into the library of one papers core."""

    def __init__(
        self,
        api: ZoteroApi,
        papers: Papers,
        verifier: Verifier,
        *,
        library: Library | None = None,
    ) -> None:
        self._api = api
        self._papers = papers
        self._verifier = verifier
        self._adder = PdfAdder(papers, verifier)
        self._library = library

    async def _ask(self, run: _Run, call: Awaitable[T]) -> T:
        """One request to Zotero, counted; its failure stops the sync."""
        run.requests += 1
        try:
            return await call
        except DoigetError as error:
            raise _ZoteroStopped(error) from error

    @property
    def _label(self) -> str:
        return self._api.library.prefix

    async def run(
        self,
        *,
        collection: str | None = None,
        progress: SyncProgress | None = None,
        project: str = DEFAULT_PROJECT_ID,
    ) -> ZoteroSyncReport:
        """Sync the library (or ``collection`` of it) into doiget's library."""
        lib = self._api.library
        data_dir = self._papers.runtime.settings.data_dir
        scope: set[str] | None = None
        scope_key: str | None = None
        run = _Run(SyncState(self._label), Path())
        if collection is not None:
            try:
                collections = await self._ask(run, self._api.collections())
            except _ZoteroStopped as stop:  # nothing done yet: the error is the answer
                raise stop.error from None
            scope_key, scope = collection_scope(collections, collection)
        run.path = syncstate.state_path(data_dir, self._label, lib.local, scope_key)
        run.state = await anyio.to_thread.run_sync(syncstate.load, run.path, self._label, scope_key)
        start = run.state.version
        stopped: DoigetError | None = None
        versions: dict[str, int] = {}
        version = start
        try:
            since = None if lib.local else start
            versions, reached = await self._ask(run, self._api.item_versions(since=since))
            version = reached
            changed = [key for key, listed in versions.items() if not self._done(run, key, listed)]
            await self._follow_deletions(run, versions, reached, whole=since is None)
            fetched = await self._read(run, changed)
            units = await self._units(run, fetched, scope)
            await self._store_all(run, units, progress)
        except _ZoteroStopped as stop:
            stopped = stop.error
        finally:
            # Cancelled, what was stored is still recorded before the sync ends.
            with anyio.CancelScope(shield=True):
                await self._save(run)
        failed = any(row.status == "failed" for row in run.rows)
        left = [key for key, listed in versions.items() if not self._done(run, key, listed)]
        not_done = len(left) if stopped else 0
        if stopped is None and not failed and version != start:
            run.state.version = version
            run.dirty = True
            await self._save(run)
        indexed = await self._index(run, project)
        return self._report(run, collection, start, version, stopped, not_done, indexed)

    @staticmethod
    def _done(run: _Run, key: str, listed: int) -> bool:
        """Whether the item ``key`` was synced at the version ``listed``."""
        known = run.state.items.get(key)
        return known is not None and known.version == listed

    @staticmethod
    async def _save(run: _Run) -> None:
        if run.dirty:
            await anyio.to_thread.run_sync(syncstate.save, run.path, run.state)
            run.dirty = False

    async def _follow_deletions(
        self, run: _Run, versions: dict[str, int], version: int, *, whole: bool
    ) -> None:
        """Forget the items deleted in Zotero; a work loses its ``zotero`` alias only.
        A ``whole`` listing (the desktop app's, which keeps no list of deletions, or a
        first sync going on after it was cut short) tells them by the keys it lacks."""
        state = run.state
        if whole:
            gone = [key for key in state.items if key not in versions]
        elif state.version is None or version == state.version:
            gone = []
        else:
            deleted = await self._ask(run, self._api.deleted(state.version))
            gone = [key for key in (deleted.items if deleted else ()) if key in state.items]
        for key in gone:
            known = state.items[key]
            if known.status == "stored" and known.ref:
                await self._papers.drop_alias(parse_ref(known.ref), "zotero", self._alias(key))
                run.rows.append(
                    SyncRow(
                        key=key,
                        status="deleted",
                        ref=known.ref,
                        reason=f"deleted in Zotero: the doiget entry {known.ref} and its PDF "
                        "are kept, known no longer by this Zotero key.",
                    )
                )
            del state.items[key]
            run.dirty = True

    async def _read(self, run: _Run, keys: Sequence[str]) -> dict[str, ZoteroItem]:
        """The changed items, 50 a request."""
        fetched: dict[str, ZoteroItem] = {}
        for batch in _chunks(sorted(keys), READ_BATCH):
            for item in await self._ask(run, self._api.items_by_key(batch)):
                fetched[item.key] = item
        return fetched

    def _in_scope(self, item: ZoteroItem, scope: set[str] | None) -> bool:
        if scope is None:
            return True
        return bool(scope.intersection(item.data.get("collections") or ()))

    async def _units(
        self, run: _Run, fetched: dict[str, ZoteroItem], scope: set[str] | None
    ) -> list[_Unit]:
        """What to store: the changed regular items in scope with their changed PDFs,
        the items whose PDFs alone changed, and PDFs attached to nothing. Everything else
        (notes, annotations, links, items outside the collection) is only recorded."""
        state = run.state
        units: dict[str, _Unit] = {}
        attachments: list[ZoteroItem] = []
        for item in fetched.values():
            if item.is_regular and self._in_scope(item, scope):
                units[item.key] = _Unit(item.key, item)
            elif is_pdf(item) and (item.parent or self._in_scope(item, scope)):
                attachments.append(item)
            else:
                state.items[item.key] = ItemState(item.version, "other", parent=item.parent)
                run.dirty = True
        for attachment in attachments:
            parent = attachment.parent
            if parent is None:
                units[attachment.key] = _Unit(attachment.key, None, [attachment], orphan=True)
            elif parent in units:
                units[parent].pdfs.append(attachment)
            elif (known := state.items.get(parent)) and known.status != "other":
                units.setdefault(parent, _Unit(parent, None)).pdfs.append(attachment)
            else:  # attached to an item outside the collection, a note, or nothing known
                state.items[attachment.key] = ItemState(attachment.version, "other", parent=parent)
                run.dirty = True
        parents = {item.parent for item in fetched.values()}
        for unit in units.values():
            new = unit.item
            # New here (added to the collection, say) with children that did not change.
            if new and new.children and new.key not in parents and new.key not in state.items:
                children = await self._ask(run, self._api.children(new.key))
                unit.pdfs = [c for c in children if is_pdf(c) and c.key not in state.items]
        return list(units.values())

    async def _store_all(
        self, run: _Run, units: Sequence[_Unit], progress: SyncProgress | None
    ) -> None:
        done = 0
        for batch in _chunks(units, STORE_BATCH):
            items = [unit for unit in batch if unit.item is not None and unit.item.is_regular]
            verdicts = await self._verifier.verify_many(
                [cited_work(unit.item) for unit in items if unit.item is not None]
            )
            checked = {unit.key: row for unit, row in zip(items, verdicts.results, strict=True)}
            for unit in batch:
                row = await self._store_unit(run, unit, checked.get(unit.key))
                done += 1
                if row is not None:
                    run.rows.append(row)
                if progress is not None:
                    said = f"{unit.key}: {row.status if row else 'PDF'}"
                    reported = progress(done, len(units), said)
                    if reported is not None:
                        await reported
            await self._save(run)

    def _alias(self, key: str) -> str:
        return f"{self._label}:{key}"

    async def _store_unit(self, run: _Run, unit: _Unit, checked: Row | None) -> SyncRow | None:
        """Store one unit; its row (None for PDFs joining a work synced before)."""
        item = unit.item
        try:
            if item is not None and checked is not None:
                known = run.state.items.get(unit.key)
                return await self._store_item(run, unit, item, checked, known)
            if unit.orphan:
                return await self._store_from_pdf(run, unit, None, "a PDF attached to no item")
            # Only its PDFs changed: they join what was synced before.
            known = run.state.items[unit.key]
            if known.ref is None:
                return await self._store_from_pdf(run, unit, None, "not identified before")
            await self._add_pdfs(run, unit, parse_ref(known.ref), known)
            return None
        except DoigetError as error:
            if error.code in _FATAL:
                raise
            return SyncRow(
                key=unit.key,
                title=_title(unit),
                status="failed",
                reason=f"not stored: {error.message} (tried again at the next sync)",
            )

    async def _store_item(
        self,
        run: _Run,
        unit: _Unit,
        item: ZoteroItem,
        checked: Row,
        known: ItemState | None,
    ) -> SyncRow:
        match = checked.match
        if checked.verdict == "uncertain":
            return SyncRow(
                key=unit.key,
                title=item.title or None,
                status="failed",
                reason=f"not checked: {checked.note or 'a source did not answer'} "
                "(tried again at the next sync)",
            )
        if checked.verdict not in _STORED or match is None or match.ref is None:
            why = checked.note or (
                "no source knows this work"
                if checked.verdict == "not_found"
                else "its record has no DOI or arXiv id, which the library files works by"
            )
            return await self._store_from_pdf(run, unit, item, why)
        ref = parse_ref(match.ref)
        citekey = citation_key(item)
        aliases = [("zotero", self._alias(item.key))]
        if citekey:
            aliases.append(("bib", citekey))
        await store_work(self._papers, ref, aliases)
        await self._keep_tags(run, ref, item)
        if known and known.ref and known.ref != ref.canonical:
            await self._papers.drop_alias(parse_ref(known.ref), "zotero", self._alias(item.key))
        state = ItemState(item.version, "stored", ref.canonical, list(known.pdfs) if known else [])
        run.state.items[item.key] = state
        run.dirty = True
        added = await self._add_pdfs(run, unit, ref, state)
        retracted = await self._retracted(ref)
        reasons = [
            "retracted: the record says this work was retracted; cite it knowing so"
            if retracted
            else None,
            checked.note if checked.verdict == "miscited" else None,
            *added,
        ]
        return SyncRow(
            key=item.key,
            title=item.title or None,
            status="updated" if known else "new",
            ref=ref.canonical,
            citekey=citekey,
            retracted=retracted or None,
            pdfs=len(state.pdfs) or None,
            problems=checked.problems or None,
            reason="; ".join(filter(None, reasons)) or None,
        )

    async def _store_from_pdf(
        self, run: _Run, unit: _Unit, item: ZoteroItem | None, why: str
    ) -> SyncRow:
        """An item no source identifies: stored through its PDFs, which the adder
        identifies from their content when it can; without a PDF, only listed."""
        key = unit.key
        version = item.version if item else _version(run, unit)
        owner = ItemState(version, "not_identified")
        run.state.items[key] = owner
        run.dirty = True
        if not unit.pdfs:
            return SyncRow(
                key=key,
                title=_title(unit),
                status="not_identified",
                reason=f"not stored: {why}; it has no PDF to identify it by (checked again "
                "when the item changes in Zotero).",
            )
        said = await self._add_pdfs(run, unit, None, owner)
        if owner.ref is None:
            return SyncRow(
                key=key, title=_title(unit), status="not_identified", reason="; ".join(said)
            )
        owner.status = "stored"
        ref = parse_ref(owner.ref)
        citekey = citation_key(item) if item else None
        aliases = [("zotero", self._alias(key))] + ([("bib", citekey)] if citekey else [])
        for kind, alias in aliases:
            await self._papers.add_alias(ref, kind, alias)
        if item is not None:
            await self._keep_tags(run, ref, item)
        identified = ref.kind != "local"
        found = (
            f"its PDF identifies it as {ref}"
            if identified
            else f"its PDF is stored as {ref}, unidentified"
        )
        return SyncRow(
            key=key,
            title=_title(unit),
            status="new" if identified else "not_identified",
            ref=ref.canonical,
            citekey=citekey,
            retracted=await self._retracted(ref) or None,
            pdfs=len(owner.pdfs),
            reason="; ".join([f"{why}; {found}", *said]),
        )

    async def _keep_tags(self, run: _Run, ref: Ref, item: ZoteroItem) -> None:
        if await self._papers.set_meta(ref, ZOTERO_TAGS, item_tags(item.data) or None):
            run.touched.add(ref.canonical)

    async def _retracted(self, ref: Ref) -> bool:
        entry = await anyio.to_thread.run_sync(self._papers.store.entry, ref)
        return entry is not None and entry.work.retracted

    async def _add_pdfs(
        self, run: _Run, unit: _Unit, ref: Ref | None, owner: ItemState
    ) -> list[str]:
        """Add the unit's PDFs through the adder (as ``ref``'s PDF when known, else
        identified from their content); what went wrong, said per attachment. The first
        PDF added without a ref gives ``owner`` its ref. An attachment is recorded
        whatever became of it: one whose file is missing is tried again when it
        changes (its file synced to Zotero changes it)."""
        said: list[str] = []
        folder = self._papers.runtime.settings.data_dir / "zotero"
        await anyio.to_thread.run_sync(lambda: folder.mkdir(parents=True, exist_ok=True))
        for attachment in unit.pdfs:
            target = ref or (parse_ref(owner.ref) if owner.ref else None)
            added, problem = await self._add_pdf(run, unit.key, attachment, target, folder)
            if problem is not None:
                said.append(f"attachment {attachment.key} not added: {problem}")
            sha = added.sha256 if added else None
            if added is not None:
                run.pdfs_added += bool(added.pdf_added)
                if added.ref:
                    owner.ref = owner.ref or added.ref
                    run.touched.add(added.ref)
                if sha and sha not in owner.pdfs:
                    owner.pdfs.append(sha)
            if not unit.orphan:
                run.state.items[attachment.key] = ItemState(
                    attachment.version,
                    "pdf",
                    added.ref if added else None,
                    [sha] if sha else [],
                    unit.key,
                )
            run.dirty = True
        return said

    async def _add_pdf(
        self, run: _Run, key: str, attachment: ZoteroItem, ref: Ref | None, folder: Path
    ) -> tuple[AddResult | None, str | None]:
        """One attachment's file through the adder; what it added, or why not."""
        with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as into:
            got = await self._ask(run, self._api.attachment_file(attachment, Path(into)))
            if got.path is None:
                return None, f"{got.filename or 'its file'}: {got.missing or 'no file'}"
            known = Identification(ref, "zotero", f"attached to Zotero item {key}") if ref else None
            try:
                return await self._adder.add_pdf(Path(got.path), known=known), None
            except DoigetError as error:
                if error.code in _FATAL:
                    raise
                return None, error.message

    async def _index(self, run: _Run, project: str) -> int:
        """Index the PDFs of the works this sync stored or re-tagged."""
        if self._library is None or not run.touched:
            return 0
        store = self._papers.store
        entries = [await anyio.to_thread.run_sync(store.entry, parse_ref(r)) for r in run.touched]
        documents = [from_entry(entry) for entry in entries if entry is not None and entry.has_pdf]
        if not documents:
            return 0
        try:
            report = await self._library.index_documents(project, documents)
        except DoigetError as error:
            if error.code in _FATAL:
                raise
            run.unindexed = (
                f"the PDFs are stored but not indexed for passage search: {error.message}"
            )
            return 0
        return sum(1 for document in report.documents if document.status == "indexed")

    def _report(
        self,
        run: _Run,
        collection: str | None,
        start: int | None,
        version: int | None,
        stopped: DoigetError | None,
        not_done: int,
        indexed: int,
    ) -> ZoteroSyncReport:
        rows = run.rows
        counted = {status: sum(row.status == status for row in rows) for status in STATUSES}
        synced = {row.key for row in rows}
        unchanged = sum(
            1
            for key, known in run.state.items.items()
            if known.status in ("stored", "not_identified") and key not in synced
            and known.parent is None
        )  # fmt: skip
        counts = SyncCounts(
            **counted,
            unchanged=unchanged,
            retracted=sum(bool(row.retracted) for row in rows),
            pdfs_added=run.pdfs_added,
        )
        note = None
        if stopped is not None:
            note = (
                f"stopped: {stopped.message}. What was stored is kept; sync again to go on "
                f"from where this stopped."
            )
        elif counted["failed"]:
            note = "the failed items are tried again at the next sync."
        note = "; ".join(filter(None, (note, run.unindexed))) or None
        return ZoteroSyncReport(
            ok=True,
            library=self._api.library.label,
            collection=collection,
            from_version=start,
            to_version=version if version is not None else 0,
            requests=run.requests,
            counts=counts,
            results=rows,
            indexed=indexed,
            interrupted=stopped is not None,
            not_done=not_done,
            note=note,
        )


def open_sync(papers: Papers, verifier: Verifier, library: Library | None = None) -> ZoteroSync:
    """The sync of the configured Zotero library through ``papers``' network;
    INVALID_CONFIG, saying how to configure one, when none is."""
    api = open_api(papers.runtime.settings, papers.network)
    return ZoteroSync(api, papers, verifier, library=library)
