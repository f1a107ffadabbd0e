"""Verified works, notes and tags written into the researcher's Zotero, approved first.

Only a work the verifier calls ``verified`` is written (a ``miscited`` one only as the
record has it, when the caller takes the correction; a retracted one never); a work the
library holds already is found (DOI, arXiv id, title) and not added twice. Nothing is
ever deleted, and no field the researcher wrote is changed: tags are merged into an
item's own, notes are new child items. Each write is put to the approval of
:mod:`.approval` first and recorded in the provenance log before it is sent (a failure
gets its own row); neither the row nor any message carries the API key.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

import anyio

from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.refs import parse_ref
from doiget.verify.contracts import Row
from doiget.zotero.api import ItemQuery, ZoteroApi
from doiget.zotero.approval import Confirm, approve, refused_off
from doiget.zotero.contracts import Written, ZoteroAdd, zotero_key
from doiget.zotero.cslmap import to_zotero_item
from doiget.zotero.matching import Identity
from doiget.zotero.models import Collection, ZoteroItem
from doiget.zotero.notehtml import note_html

if TYPE_CHECKING:
    from doiget.papers.service import Papers
    from doiget.papers.store import Entry
    from doiget.verify.cited import CitedWork
    from doiget.verify.service import Verifier
    from doiget.zoteroconfig import WriteMode

logger = logging.getLogger("doiget.zotero")
T = TypeVar("T")

EVENT: Final = "zotero_write"
PDF_TITLE: Final = "Full Text PDF"
# The items a duplicate search reads: the library's best matches come first.
DUPLICATE_PAGE: Final = 25
LOCAL_READ_ONLY: Final = (
    "the Zotero desktop app takes only new items from doiget (its local API is "
    "read-only): {what} needs the Web API (DOIGET_ZOTERO_LIBRARY with a key that may "
    "write, DOIGET_ZOTERO_API_KEY)"
)


def _item_key(request: ZoteroAdd) -> str:
    """The item key a note or tags go to; INVALID_REF when ``target`` is none."""
    try:
        return zotero_key(request.target)
    except ValueError as error:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"action {request.action!r} takes the Zotero item's key as target: {error}; "
            "doiget_zotero_search finds it.",
            field="target",
        ) from None


def _refuse_empty(request: ZoteroAdd, what: str) -> NoReturn:
    raise DoigetError(ErrorCode.INVALID_REF, f"action {request.action!r} needs {what}.")


def _refused_row(row: Row, take_correction: bool) -> DoigetError | None:
    """Why the verifier's ``row`` may not be written (None when it may)."""
    problems = [problem.kind for problem in row.problems]
    details = {"verdict": row.verdict, "problems": problems}
    if row.verdict == "verified":
        return None
    if "retracted" in problems:
        return DoigetError(
            ErrorCode.INVALID_REF,
            "the work is retracted: doiget does not add it to Zotero. Cite the work that "
            "replaces it, if any.",
            details=details,
        )
    if row.verdict == "miscited":
        if take_correction:
            return None
        return DoigetError(
            ErrorCode.INVALID_REF,
            f"the reference is miscited ({', '.join(problems)}): nothing was written. Call "
            "again with takeCorrection to add the work as its record has it, or fix the "
            "reference.",
            details=details,
        )
    code = ErrorCode.NOT_FOUND if row.verdict == "not_found" else ErrorCode.INVALID_REF
    why = row.note or row.verdict
    return DoigetError(
        code,
        f"the reference is {row.verdict.replace('_', ' ')} ({why}): only a verified work is "
        "added to Zotero. Give its DOI or arXiv id, or verify it first.",
        details=details,
    )


def _arxiv_of(row: Row, csl: dict[str, Any]) -> str | None:
    """The arXiv id of the matched work, from its ref or its CSL ``number``."""
    ref = row.match.ref if row.match else None
    if ref:
        try:
            parsed = parse_ref(ref)
        except DoigetError:
            parsed = None
        if parsed is not None and parsed.kind == "arxiv":
            return parsed.value
    number = str(csl.get("number") or "")
    return number.removeprefix("arXiv:") if number.startswith("arXiv:") else None


@dataclass
class _Plan:
    """A work's write, as put to the researcher."""

    item: dict[str, Any]
    ref: str | None
    collection: Collection | None
    new_collection: str | None
    existing: ZoteroItem | None
    note: str | None
    tags: list[str]
    skipped: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """The collection the work goes into, as the researcher is told."""
        if self.collection is not None:
            return self.collection.name
        if self.new_collection is not None:
            return f"{self.new_collection} (new)"
        return "the library root"

    @property
    def adds_nothing(self) -> bool:
        """The library holds the work and nothing is to be added to it."""
        return self.existing is not None and not (self.note or self.tags)


class ZoteroWriter:
    """Writes into one Zotero library under one write mode."""

    def __init__(self, api: ZoteroApi, papers: Papers, verifier: Verifier, mode: WriteMode) -> None:
        self._api = api
        self._papers = papers
        self._verifier = verifier
        self._mode = mode

    @property
    def _local(self) -> bool:
        return self._api.library.local

    @property
    def _label(self) -> str:
        return self._api.library.label

    async def add(self, request: ZoteroAdd, confirm: Confirm) -> Written:
        """Carry out one write of ``request``, approved through ``confirm``."""
        if self._mode == "off":
            raise refused_off()
        if request.action == "work":
            return await self._add_work(request, confirm)
        if self._local:
            what = "a note on an item" if request.action == "note" else "tags on an item"
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                LOCAL_READ_ONLY.format(what=what) + "; or add the work with its note and "
                "tags (action work) and the app saves them with it.",
            )
        key = _item_key(request)
        if request.action == "note":
            if not request.note:
                _refuse_empty(request, "a note")
            return await self._add_note(key, request, confirm)
        if not request.tags:
            _refuse_empty(request, "tags")
        return await self._add_tags(key, request, confirm)

    # -- a work -----------------------------------------------------------------

    async def _add_work(self, request: ZoteroAdd, confirm: Confirm) -> Written:
        if not self._local:
            await self._check_key(files=True, notes=bool(request.note))
        row = await self._verifier.verify(await self._cited(request.target))
        refusal = _refused_row(row, request.take_correction)
        if refusal is not None:
            raise refusal
        plan = await self._plan(request, row)
        written = Written(
            action="work", library=self._label, ref=plan.ref, title=plan.item.get("title"),
            integrity=row.integrity, problems=row.problems or None,
        )  # fmt: skip
        if plan.existing is not None:
            written.key, written.created = plan.existing.key, False
            plan.skipped.append(f"the library holds this work already as {plan.existing.key}")
            if self._local and not plan.adds_nothing:
                plan.skipped.append(LOCAL_READ_ONLY.format(what="adding a note or tags to it"))
            if self._local or plan.adds_nothing:
                written.skipped = plan.skipped
                return written
        await approve(self._mode, confirm, *self._work_message(plan))
        if self._local:
            await self._save_local(plan, written)
        elif plan.existing is not None:
            await self._add_to_existing(plan, plan.existing.key, written)
        else:
            await self._save_web(plan, written)
        written.skipped = plan.skipped or None
        return written

    async def _cited(self, ref: str) -> CitedWork:
        """What the verifier checks: a stored entry's own record when ``ref`` names one,
        else the reference as given (a DOI, an arXiv id, BibTeX, free text)."""
        from doiget.cite.csl import to_csl
        from doiget.verify.inputs import read_item

        try:
            parsed = parse_ref(ref)
        except DoigetError:
            return read_item(ref)
        entry = await self._entry(ref)
        return read_item(ref if entry is None else to_csl(entry.work, parsed.canonical))

    async def _plan(self, request: ZoteroAdd, row: Row) -> _Plan:
        if row.corrected is None:  # the record's citation is what gets written
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"the verifier matched {request.target[:200]!r} but returned no record to "
                "write: nothing was written. Verify it again, or give its DOI or arXiv id.",
            )
        csl = dict(row.corrected.csl)
        item = to_zotero_item(csl, arxiv_id=_arxiv_of(row, csl))
        item["tags"] = [{"tag": tag} for tag in dict.fromkeys(request.tags)]
        identity = Identity.of_item(item)
        existing = await self._find(identity, str(item.get("title") or ""))
        collection, new_name = await self._collection(request.collection)
        ref = row.match.ref if row.match else None
        source = f"{item.get('title', '')} ({ref or 'no identifier'})"
        note = note_html(request.note, source) if request.note else None
        tags = list(dict.fromkeys(request.tags))
        return _Plan(item, ref, collection, new_name, existing, note, tags)

    async def _find(self, identity: Identity, title: str) -> ZoteroItem | None:
        """The library's item of the same work, if any: searched by each identifier, then
        by title (all fields, so a DOI kept in ``extra`` is found too)."""
        seen: set[str] = set()
        for text in dict.fromkeys(t for t in (identity.doi, identity.arxiv_id, title) if t):
            page = await self._api.search(
                ItemQuery(q=text, qmode="everything"), limit=DUPLICATE_PAGE
            )
            for found in page.items:
                if found.key not in seen and found.is_regular:
                    seen.add(found.key)
                    if identity.same(Identity.of_item(found.data)):
                        return found
        return None

    async def _collection(self, name: str | None) -> tuple[Collection | None, str | None]:
        """The collection named ``name`` (exactly, else ignoring case), or the name of
        the one to create; the desktop app cannot create one."""
        if not name:
            return None, None
        collections = await self._api.collections()
        found = next((c for c in collections if c.name == name), None) or next(
            (c for c in collections if c.name.casefold() == name.casefold()), None
        )
        if found is not None:
            return found, None
        if self._local:
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"the Zotero desktop app's library has no collection {quoted(name)} and its "
                "connector cannot make one: ask the researcher to create it in Zotero, or "
                "name one of: " + ", ".join(sorted(c.name for c in collections)[:20]),
            )
        return None, name

    def _work_message(self, plan: _Plan) -> tuple[str, dict[str, Any]]:
        """What the researcher is asked to approve: the work, where it goes, what with."""
        item = plan.item
        names = [c.get("lastName") or c.get("name", "") for c in item["creators"]][:3]
        details: dict[str, Any] = {
            "library": self._label,
            "title": item.get("title"),
            "creators": names,
            "date": item.get("date"),
            "identifier": plan.ref,
            "tags": plan.tags,
        }
        if plan.existing is not None:
            details["existing"] = plan.existing.key
            action = f"Add to {plan.existing.key}, already in {self._label}"
        else:
            details["collection"] = plan.where
            action = f"Add to {self._label}, collection {plan.where}: a new item"
        extras = [
            "its Open Access PDF" if plan.existing is None else "",
            "a note" if plan.note else "",
            f"tags {', '.join(plan.tags)}" if plan.tags else "",
        ]
        with_ = ", ".join(part for part in extras if part)
        message = f"{action} {item.get('title', '')!r} ({', '.join(names)}, {item.get('date')})"
        return message + (f" with {with_}" if with_ else "") + ".", details

    async def _save_web(self, plan: _Plan, written: Written) -> None:
        """A new item (in its collection, made first when new), its PDF and its note."""
        collection = plan.collection
        if collection is None and plan.new_collection is not None:
            name = plan.new_collection
            collection = await self._write(
                plan.ref, f"create collection {name!r}", lambda: self._api.create_collection(name)
            )
            written.collection_created = True
        if collection is not None:
            plan.item["collections"] = [collection.key]
            written.collection = collection.name
        what = f"create item {plan.item.get('title', '')!r}"
        key = await self._write(plan.ref, what, lambda: self._create_one(plan.item))
        written.key, written.created = key, True
        written.attachment = await self._attach_pdf(plan, key)
        if plan.note is not None:
            written.note = await self._create_note(plan.ref, key, plan.note)
        written.tags_added = plan.tags or None

    async def _add_to_existing(self, plan: _Plan, key: str, written: Written) -> None:
        """A note and tags asked for with a work the library holds go onto its item."""
        if plan.note is not None:
            written.note = await self._create_note(plan.ref, key, plan.note)
        if plan.tags:
            written.tags_added = await self._merge_tags(key, plan.tags) or None

    async def _save_local(self, plan: _Plan, written: Written) -> None:
        """The new item saved through the desktop app's connector, with its note, tags
        and its PDF (the library's copy, else fetched now). The app stores only the
        files it is sent: it downloads no attachment of a connector's save itself."""
        path = await self._pdf_path(plan)
        pdf_url = await self._pdf_url(plan.ref) if path is not None else None
        item = dict(plan.item, notes=[{"note": plan.note}] if plan.note else [])
        # The connector files an item by the collection's name.
        collection = plan.collection.name if plan.collection else None
        await self._write(
            plan.ref,
            f"connector save {plan.item.get('title', '')!r}",
            lambda: self._api.connector_save(
                item, collection=collection, pdf_url=pdf_url, pdf=path
            ),
        )
        written.created = True
        written.collection = collection
        # The connector answers no keys: the attached PDF is named by its source.
        written.attachment = (pdf_url or path.name) if path is not None else None
        written.tags_added = plan.tags or None

    async def _pdf_url(self, ref: str | None) -> str | None:
        """The link the attached PDF records as its source: the work's Open Access
        PDF as the library recorded it, else as the resolver finds it now."""
        from doiget.papers.contracts import PaperLookup

        if ref is None:
            return None
        entry = await self._entry(ref)
        fields: dict[str, Any] = (entry.document.get("doiget") or {}) if entry else {}
        if fields.get("oa_url"):
            return str(fields["oa_url"])
        try:
            return (await self._papers.resolve(PaperLookup(ref=ref))).oa_url
        except DoigetError as error:
            logger.info("no Open Access link for %s: %s", ref, error.message)
            return None

    async def _attach_pdf(self, plan: _Plan, key: str) -> str | None:
        """The work's PDF (the library's copy, else fetched now) uploaded under ``key``."""
        path = await self._pdf_path(plan)
        if path is None:
            return None
        filename = f"{(plan.ref or key).replace('/', '_')}.pdf"
        return await self._write(
            plan.ref,
            f"upload PDF {path.name} to {key}",
            lambda: self._api.upload_attachment(key, path, filename=filename, title=PDF_TITLE),
        )

    async def _pdf_path(self, plan: _Plan) -> Path | None:
        from doiget.papers.contracts import Fetched, PaperFetch

        if plan.ref is None:
            plan.skipped.append("the PDF: the work has no DOI or arXiv id to fetch it by")
            return None
        entry = await self._entry(plan.ref)
        if entry is not None and entry.has_pdf:
            return entry.pdf_path
        try:
            fetched = await self._papers.fetch(PaperFetch(ref=plan.ref))
        except DoigetError as error:
            plan.skipped.append(f"the PDF: {error.message}")
            return None
        path = fetched.path if isinstance(fetched, Fetched) else None
        return Path(path) if path else None

    async def _entry(self, ref: str) -> Entry | None:
        """The library's entry of ``ref``, if it holds one."""
        return await anyio.to_thread.run_sync(self._papers.store.entry, parse_ref(ref))

    # -- a note, tags -----------------------------------------------------------

    async def _add_note(self, key: str, request: ZoteroAdd, confirm: Confirm) -> Written:
        await self._check_key(notes=True)
        item = await self._api.item(key)
        html = note_html(request.note or "")
        details = {"library": self._label, "item": item.key, "title": item.title,
                   "note": request.note}  # fmt: skip
        message = f"Add a note to {item.key} {item.title!r} in {self._label}."
        await approve(self._mode, confirm, message, details)
        note_key = await self._create_note(self._ref_of(item.key), item.key, html)
        return Written(
            action="note", library=self._label, key=item.key, title=item.title, note=note_key
        )

    async def _add_tags(self, key: str, request: ZoteroAdd, confirm: Confirm) -> Written:
        await self._check_key()
        item = await self._api.item(key)
        tags = list(dict.fromkeys(request.tags))
        details = {"library": self._label, "item": item.key, "title": item.title, "tags": tags}
        message = f"Add tags {', '.join(tags)} to {item.key} {item.title!r} in {self._label}."
        await approve(self._mode, confirm, message, details)
        added = await self._merge_tags(item.key, tags)
        return Written(
            action="tags", library=self._label, key=item.key, title=item.title,
            tags_added=added or None,
            skipped=None if added else ["the item has these tags already"],
        )  # fmt: skip

    async def _create_note(self, ref: str | None, parent: str, html: str) -> str:
        note = {"itemType": "note", "parentItem": parent, "note": html, "tags": [],
                "collections": [], "relations": {}}  # fmt: skip
        named = ref or self._ref_of(parent)
        return await self._write(named, f"create note on {parent}", lambda: self._create_one(note))

    async def _merge_tags(self, key: str, tags: Sequence[str]) -> list[str]:
        """Add ``tags`` to the item's own (none removed, no other field sent); the item's
        version guards the update and a change made meanwhile is read again."""
        added: list[str] = []

        def merged(current: ZoteroItem) -> dict[str, Any] | None:
            own = [tag for tag in current.data.get("tags") or [] if isinstance(tag, dict)]
            have = {str(tag.get("tag")) for tag in own}
            added[:] = [tag for tag in dict.fromkeys(tags) if tag not in have]
            return {"tags": [*own, *({"tag": tag} for tag in added)]} if added else None

        ref = self._ref_of(key)
        await self._write(
            ref, f"add tags {', '.join(tags)} to {key}", lambda: self._api.update_item(key, merged)
        )
        return added

    # -- shared -------------------------------------------------------------------

    async def _check_key(self, *, files: bool = False, notes: bool = False) -> None:
        """CAPABILITY_DENIED unless the API key may write what this call writes."""
        access = await self._api.key_access()
        lacking = [
            what
            for what, allowed in (
                ("write items", access.write),
                ("write notes", access.notes or not notes),
                ("upload files", access.files or not files),
            )
            if not allowed
        ]
        if lacking:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the Zotero API key may not {' or '.join(lacking)} in {self._label}: nothing "
                "was written. Ask the researcher for a key with write access (zotero.org, "
                "Settings, Security, Applications) in DOIGET_ZOTERO_API_KEY.",
            )

    def _ref_of(self, key: str) -> str:
        """How a provenance row names a Zotero item."""
        return f"zotero:{self._api.library.prefix}:{key}"

    async def _create_one(self, new: Mapping[str, Any]) -> str:
        """Create one item; its key, or why Zotero refused it."""
        result = await self._api.create_items([new])
        if 0 in result.created:
            return result.created[0]
        why = result.failed.get(0, "no key came back")
        raise DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"Zotero did not create the item ({why}); check the library before trying again.",
        )

    async def _record(self, ref: str | None, detail: str, error: DoigetError | None = None) -> None:
        """A provenance row for a write (before it is sent), or for its failure."""
        source = "zotero_local" if self._local else "zotero"
        fields: dict[str, Any] = {"ref": ref, "source": source, "capability": "zotero_write",
                                  "detail": f"{self._label}: {detail}"}  # fmt: skip
        if error is None:
            fields["result"] = "ok"
        else:
            fields.update(result="err", error_code=error.code.value)
        append = functools.partial(self._papers.log.append, EVENT, **fields)
        await anyio.to_thread.run_sync(append)

    async def _write(self, ref: str | None, detail: str, send: Callable[[], Awaitable[T]]) -> T:
        """One write: its provenance row, then the write; a failure gets a row of its own
        before it is raised."""
        await self._record(ref, detail)
        try:
            return await send()
        except DoigetError as error:
            await self._record(ref, f"{detail} failed", error)
            raise
