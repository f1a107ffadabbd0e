"""The Zotero protocol, spoken through doiget's network layer.

One class, :class:`ZoteroApi`, for both ways in: the desktop app's local API
(``http://127.0.0.1:23119/api/users/0/…``, read-only, plus the connector endpoints
``/connector/…`` that save new items into the open library) and the Web API
(``https://api.zotero.org/{users|groups}/<id>/…`` with ``Zotero-API-Key``). Rules
kept here: ``Zotero-API-Version: 3`` on every request; paging by ``start``/``limit``
with ``Total-Results`` and ``Link``; ``Last-Modified-Version`` read on every answer;
``Backoff`` and ``Retry-After`` honoured by the network's rate gate; writes of at most
50 objects with a ``Zotero-Write-Token``; an update sent with
``If-Unmodified-Since-Version`` and a 412 answered by re-reading, never by overwriting.

The API is spoken directly rather than through pyzotero: pyzotero is synchronous and
opens its own HTTP client, so its requests would pass around doiget's allowlist, rate
gate, redaction and SSRF guard.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast
from urllib.parse import unquote, urlencode, urlsplit
from urllib.request import url2pathname

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.net.client import Fetched, SourceClient
from doiget.secret import Secret
from doiget.upstreams.zotero import API_HOST, KEY_HEADER
from doiget.zotero.models import (
    Annotation,
    AnnotationType,
    AttachmentFile,
    Collection,
    Deleted,
    ItemPage,
    KeyAccess,
    LibraryRef,
    WriteResult,
    ZoteroItem,
)

logger = logging.getLogger("doiget.zotero")

MAX_WRITE_OBJECTS: Final = 50
PAGE_LIMIT: Final = 100
# Reads and re-asks of an item whose update keeps meeting a change made meanwhile.
UPDATE_TRIES: Final = 4
API_VERSION: Final = "3"
WEB_ROOT: Final = f"https://{API_HOST}"
# The desktop app's own library in its local API.
LOCAL_LIBRARY: Final = LibraryRef("users", "0", local=True)
ANNOTATION_TYPES: Final = frozenset({"highlight", "underline", "note", "image", "ink", "text"})
# Statuses the layer answers itself (with what to do next) instead of the client's
# generic refusal.
_OWN_STATUSES: Final = (400, 403, 404, 409, 412, 413, 428, 501)
KEYS_PAGE: Final = "https://www.zotero.org/settings/keys"
_ENABLE_LOCAL: Final = (
    "Is the Zotero desktop app running, with 'Allow other applications on this computer "
    "to communicate with Zotero' on in its Settings > Advanced?"
)
_WEB_FOR_WRITES: Final = (
    "set DOIGET_ZOTERO_LIBRARY and DOIGET_ZOTERO_API_KEY (a key with write access, from "
    f"{KEYS_PAGE}) instead of DOIGET_ZOTERO_LOCAL to let doiget write through the Web API"
)

# (done, total) while a listing pages through the library.
PageProgress = Callable[[int, int], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class ItemQuery:
    """A search of the library: Zotero's quick search and its filters."""

    q: str | None = None
    # "titleCreatorYear" (Zotero's default) or "everything" (all fields and full text).
    qmode: str = "titleCreatorYear"
    tags: tuple[str, ...] = ()
    collection: str | None = None  # a collection key
    item_type: str | None = None  # e.g. "journalArticle", "-attachment"
    year: int | None = None
    top: bool = True  # top-level items only (no attachments, notes, annotations)


class ZoteroApi:
    """Reads and writes one Zotero library; build it with :func:`open_api`."""

    library: LibraryRef

    def __init__(
        self,
        library: LibraryRef,
        client: SourceClient,
        root: str,
        key: Secret | None = None,
        *,
        connector: str | None = None,
    ) -> None:
        self.library = library
        self._client = client
        # ``root`` + ``/users/<id>`` is the library's URL; ``connector`` is the desktop
        # app's connector root (None for the Web API, which has none).
        self._root = root
        self._key = key
        self._connector = connector

    # -- reading -------------------------------------------------------------

    async def key_access(self) -> KeyAccess:
        """What the key may do (Web API ``/keys/current``); the local app reads only."""
        if self.library.local:
            return KeyAccess(read=True, write=False, notes=True, files=True)
        fetched = await self._send("GET", f"{self._root}/keys/current", what="read its key")
        info = self._object(fetched)
        access = info.get("access")
        if not isinstance(access, dict):
            raise self._client.schema_drift("answered /keys/current without its access")
        if self.library.kind == "users":
            own = str(info.get("userID")) == self.library.id
            rights = _mapping(access.get("user")) if own else {}
            return KeyAccess(
                read=bool(rights.get("library")),
                write=bool(rights.get("write")),
                notes=bool(rights.get("notes")),
                files=bool(rights.get("files")),
                user_id=_text_or_none(info.get("userID")),
                username=_text_or_none(info.get("username")),
            )
        groups = _mapping(access.get("groups"))
        rights = _mapping(groups.get(self.library.id) or groups.get("all"))
        return KeyAccess(
            read=bool(rights.get("library")),
            write=bool(rights.get("write")),
            notes=bool(rights.get("library")),
            files=bool(rights.get("write")),
            user_id=_text_or_none(info.get("userID")),
            username=_text_or_none(info.get("username")),
        )

    async def library_version(self) -> int:
        """The library's current version (one cheap request)."""
        fetched = await self._get("/items/top", {"limit": "1", "format": "versions"})
        return _version_of(fetched)

    async def search(self, query: ItemQuery, *, start: int = 0, limit: int = 25) -> ItemPage:
        """One page of items matching ``query`` (with their CSL-JSON). Zotero filters by
        no year of its own: the quick search is given the year when it has no other words
        (its default mode matches years), and the page keeps the items of that year."""
        path = f"/collections/{_key(query.collection)}/items" if query.collection else "/items"
        if query.top:
            path += "/top"
        params: list[tuple[str, str]] = [("include", "data,csljson")]
        words = query.q or (str(query.year) if query.year is not None else None)
        if words:
            params += [("q", words), ("qmode", query.qmode)]
        params += [("tag", tag) for tag in query.tags]
        if query.item_type:
            params.append(("itemType", query.item_type))
        params += [("start", str(max(start, 0))), ("limit", str(max(1, min(limit, PAGE_LIMIT))))]
        fetched = await self._get(path, params)
        items = [self._item(raw) for raw in self._array(fetched)]
        if query.year is not None:
            items = [item for item in items if _year_of(item) == query.year]
        return ItemPage(tuple(items), _total(fetched, len(items)), _version_of(fetched))

    async def item_versions(self, *, since: int | None = None) -> tuple[dict[str, int], int]:
        """Every item key with its version (``format=versions``), changed since ``since``
        when given, and the library version that listing is of."""
        params = [("format", "versions")]
        if since:
            params.append(("since", str(since)))
        versions: dict[str, int] = {}
        library_version = 0
        async for fetched in self._pages("/items", params):
            library_version = max(library_version, _version_of(fetched))
            page = self._object(fetched)
            for key, version in page.items():
                if not isinstance(version, int):
                    raise self._client.schema_drift("listed an item version that is not a number")
                versions[str(key)] = version
        return versions, library_version

    async def items_by_key(
        self, keys: Sequence[str], *, progress: PageProgress | None = None
    ) -> list[ZoteroItem]:
        """The items of ``keys`` (``itemKey=`` 50 at a time), with their CSL-JSON;
        ``progress`` hears (done, total) after each batch."""
        wanted = [_key(key) for key in dict.fromkeys(keys)]
        found: list[ZoteroItem] = []
        for first in range(0, len(wanted), MAX_WRITE_OBJECTS):
            batch = wanted[first : first + MAX_WRITE_OBJECTS]
            params = [
                ("itemKey", ",".join(batch)),
                ("include", "data,csljson"),
                ("limit", str(MAX_WRITE_OBJECTS)),
            ]
            found += [self._item(raw) for raw in self._array(await self._get("/items", params))]
            if progress is not None:
                await _told(progress, min(first + len(batch), len(wanted)), len(wanted))
        return found

    async def item(self, key: str) -> ZoteroItem:
        """One item by key (NOT_FOUND when the library has none)."""
        fetched = await self._get(f"/items/{_key(key)}", [("include", "data,csljson")])
        return self._item(self._object(fetched))

    async def children(self, key: str) -> list[ZoteroItem]:
        """An item's attachments and notes."""
        path = f"/items/{_key(key)}/children"
        return [self._item(raw) async for raw in self._objects(path, [])]

    async def annotations(self, attachment_key: str) -> list[Annotation]:
        """The annotations on one PDF attachment."""
        path = f"/items/{_key(attachment_key)}/children"
        found = []
        async for raw in self._objects(path, [("itemType", "annotation")]):
            annotation = _annotation(self._item(raw))
            if annotation is not None:
                found.append(annotation)
        return found

    async def collections(self) -> list[Collection]:
        """Every collection (the tree is in ``parent``)."""
        found = []
        async for raw in self._objects("/collections", []):
            data = raw.get("data")
            meta = _mapping(raw.get("meta"))
            if not isinstance(data, dict) or not isinstance(raw.get("key"), str):
                raise self._client.schema_drift("listed a collection without its key and data")
            parent = data.get("parentCollection")
            items = meta.get("numItems")
            found.append(
                Collection(
                    key=raw["key"],
                    version=_int(raw.get("version")),
                    name=str(data.get("name", "")),
                    parent=str(parent) if parent else None,
                    items=items if isinstance(items, int) else None,
                )
            )
        return found

    async def deleted(self, since: int) -> Deleted | None:
        """What was deleted since ``since``; None for the local app, which keeps no list
        (the caller compares keys instead)."""
        if self.library.local:
            return None
        fetched = await self._get("/deleted", [("since", str(since))])
        body = self._object(fetched)
        return Deleted(
            items=tuple(str(key) for key in body.get("items") or ()),
            collections=tuple(str(key) for key in body.get("collections") or ()),
            library_version=_version_of(fetched),
        )

    async def attachment_file(self, attachment: ZoteroItem, into: Path) -> AttachmentFile:
        """The attachment's file: its path in the local app's storage, or downloaded
        through the Web API into a temp file under ``into``."""
        data = attachment.data
        content_type = str(data.get("contentType") or "")
        filename = str(data.get("filename") or "")

        def missing(why: str) -> AttachmentFile:
            return AttachmentFile(attachment.key, content_type, filename, missing=why)

        link_mode = str(data.get("linkMode") or "")
        if attachment.item_type != "attachment" or link_mode == "linked_url":
            return missing("it is a link to a web page, not a stored file")
        if self.library.local:
            return await self._local_file(attachment, content_type, filename)
        if link_mode == "linked_file":
            return missing(
                "it is a linked file on the researcher's computer, which the Web API does not "
                "hold; read it through the desktop app (DOIGET_ZOTERO_LOCAL)"
            )
        if content_type != "application/pdf":
            return missing(f"it is {content_type or 'a file of unknown type'}; doiget reads PDFs")
        url = self._library_url(f"/items/{_key(attachment.key)}/file")
        try:
            async with self._client.download_pdf(
                url, into, from_upstream=False, headers=self._headers(url)
            ) as downloaded:
                kept = into / f".zotero-{attachment.key}-{uuid.uuid4().hex}.pdf"
                downloaded.path.replace(kept)
        except DoigetError as exc:
            if exc.code is ErrorCode.NOT_FOUND:
                return missing(
                    "Zotero holds no file for it (never synced to Zotero's storage, or kept "
                    "in WebDAV storage doiget cannot reach)"
                )
            raise
        return AttachmentFile(attachment.key, content_type, filename, path=str(kept))

    # -- writing (Web API with a write key; the local app through its connector) ---

    async def create_items(self, items: Sequence[Mapping[str, Any]]) -> WriteResult:
        """Create items (batches of at most 50, each with a write token)."""
        return await self._create("/items", items, "add items to")

    async def update_item(
        self, key: str, change: Callable[[ZoteroItem], Mapping[str, Any] | None]
    ) -> ZoteroItem:
        """Patch an item with what ``change`` computes from its current state, sent with
        its version; on a 412 the item is read again and ``change`` asked again (a few
        times), never overwritten. ``change`` returning None means nothing to send."""
        self._writable("change an item in")
        for _ in range(UPDATE_TRIES):
            current = await self.item(key)
            patch = change(current)
            if patch is None:
                return current
            fetched = await self._send(
                "PATCH",
                self._library_url(f"/items/{_key(key)}"),
                headers={
                    "Content-Type": "application/json",
                    "If-Unmodified-Since-Version": str(current.version),
                },
                body=_json_bytes(patch),
                what="change an item in",
                conflict_ok=True,
            )
            if fetched.status == 412:
                logger.info("zotero item %s changed meanwhile; reading it again", key)
                continue
            data = {**current.data, **patch, "version": _version_of(fetched)}
            return ZoteroItem(key, _version_of(fetched), data, current.csl, current.children)
        raise DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"item {key} in {self.library.label} kept changing in Zotero while doiget wrote "
            f"to it ({UPDATE_TRIES} tries); nothing was overwritten. Try again once it is not "
            "being edited.",
            details={"status": 412, "retryable": True},
        )

    async def create_collection(self, name: str, parent: str | None = None) -> Collection:
        """A new collection."""
        data = {"name": name, "parentCollection": _key(parent) if parent else False}
        result = await self._create("/collections", [data], "add a collection to")
        if 0 not in result.created:
            why = result.failed.get(0, "Zotero did not say why")
            raise self._write_refused(f"the collection {name!r} was not created: {why}")
        return Collection(result.created[0], result.library_version, name, parent, 0)

    async def upload_attachment(self, parent: str, pdf: Path, *, filename: str, title: str) -> str:
        """A stored PDF as an imported-file attachment of ``parent`` (the Web API's
        upload authorisation, upload and registration); returns the attachment key."""
        self._writable("add a file to")
        stat, md5 = await anyio.to_thread.run_sync(_file_facts, pdf)
        template = {
            "itemType": "attachment",
            "parentItem": _key(parent),
            "linkMode": "imported_file",
            "title": title,
            "contentType": "application/pdf",
            "charset": "",
            "filename": filename,
            "tags": [],
            "relations": {},
        }
        created = await self.create_items([template])
        if 0 not in created.created:
            why = created.failed.get(0, "Zotero did not say why")
            raise self._write_refused(f"the attachment was not created: {why}")
        key = created.created[0]
        file_url = self._library_url(f"/items/{key}/file")
        form = {
            "md5": md5,
            "filename": filename,
            "filesize": str(stat.st_size),
            "mtime": str(int(stat.st_mtime * 1000)),
        }
        authorised = self._object(await self._file_step(file_url, form))
        if authorised.get("exists") == 1:
            return key
        upload = {name: authorised.get(name) for name in ("url", "prefix", "suffix", "uploadKey")}
        if not all(isinstance(value, str) for value in upload.values()):
            raise self._client.schema_drift("authorised an upload without its url and keys")
        content = await anyio.Path(pdf).read_bytes()
        body = str(upload["prefix"]).encode() + content + str(upload["suffix"]).encode()
        await self._send(
            "POST",
            str(upload["url"]),
            headers={"Content-Type": str(authorised.get("contentType") or "")},
            body=body,
            what="upload a file to",
        )
        await self._file_step(file_url, {"upload": str(upload["uploadKey"])})
        return key

    async def connector_save(
        self,
        item: Mapping[str, Any],
        *,
        collection: str | None,
        pdf_url: str | None,
        pdf: Path | None = None,
    ) -> None:
        """Save a new item into the open desktop library (``/connector/saveItems``,
        then ``/connector/updateSession`` to file it into the collection named
        ``collection``). ``pdf`` (a stored file) is attached with ``/connector/saveAttachment``,
        its source named by ``pdf_url``."""
        if self._connector is None:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                "the Web API has no connector: add works to it with create_items.",
            )
        session = uuid.uuid4().hex
        target = await self._connector_target(collection) if collection else None
        connector_id = "doiget-1"
        saved = {**dict(item), "id": connector_id}
        await self._connector_post(
            "saveItems",
            _json_bytes({"sessionID": session, "uri": pdf_url or "", "items": [saved]}),
            {"Content-Type": "application/json"},
        )
        if pdf is not None:
            metadata = {
                "sessionID": session,
                "parentItemID": connector_id,
                "title": "Full Text PDF",
                "url": pdf_url or "",
            }
            content = await anyio.Path(pdf).read_bytes()
            await self._connector_post(
                "saveAttachment",
                content,
                {"Content-Type": "application/pdf", "X-Metadata": json.dumps(metadata)},
            )
        if target is not None:
            await self._connector_post(
                "updateSession",
                _json_bytes({"sessionID": session, "target": target}),
                {"Content-Type": "application/json"},
            )

    async def aclose(self) -> None:
        """Nothing of its own: the network owns the connections."""

    # -- requests ------------------------------------------------------------------

    def _headers(self, url: str) -> dict[str, str]:
        """The API version, and the key for a request to api.zotero.org (never to the
        file host an upload goes to, nor to the desktop app)."""
        headers = {"Zotero-API-Version": API_VERSION}
        if self._key is not None and urlsplit(url).hostname == API_HOST:
            headers[KEY_HEADER] = self._key.reveal()
        return headers

    def _library_url(self, path: str) -> str:
        return f"{self._root}/{self.library.prefix}{path}"

    async def _get(
        self, path: str, params: Sequence[tuple[str, str]] | Mapping[str, str]
    ) -> Fetched:
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params)
        url = self._library_url(path) + (f"?{urlencode(pairs)}" if pairs else "")
        return await self._send("GET", url, what="read")

    async def _send(
        self,
        method: str,
        url: str,
        *,
        what: str,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        conflict_ok: bool = False,
    ) -> Fetched:
        """One request; Zotero's refusals become errors that say what to do next. A 412
        comes back as an answer when ``conflict_ok`` (the caller re-reads)."""
        sent = {**self._headers(url), **(headers or {})}
        if method == "GET":
            sent.setdefault("Accept", "application/json")
        try:
            fetched = await self._client.send(
                method, url, headers=sent, body=body, accept_status=_OWN_STATUSES
            )
        except DoigetError as exc:
            explained = self._explained(exc)
            if explained is exc:
                raise
            raise explained from exc
        if fetched.status == 412 and conflict_ok:
            return fetched
        if fetched.status >= 400:
            raise self._refusal(fetched, method, what)
        return fetched

    def _explained(self, exc: DoigetError) -> DoigetError:
        """A failure to reach the desktop app, said with how to make it reachable."""
        if not self.library.local or exc.code not in (
            ErrorCode.NETWORK_ERROR,
            ErrorCode.FETCH_TIMEOUT,
        ):
            return exc
        return DoigetError(
            exc.code,
            f"{exc.message} {_ENABLE_LOCAL}",
            exc.denial,
            retry_after=exc.retry_after,
            details=exc.details,
        )

    def _refusal(self, fetched: Fetched, method: str, what: str) -> DoigetError:
        status = fetched.status
        said = fetched.text.strip()[:200]
        label = self.library.label
        if status == 403 and self.library.local:
            return DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the Zotero desktop app refused to {what} its library ({said}). Turn on "
                "'Allow other applications on this computer to communicate with Zotero' in "
                "its Settings > Advanced.",
                details={"status": 403},
            )
        if status == 403 and method != "GET":
            return self._write_refused(
                f"the API key has no write access to {label} (Zotero: {said})"
            )
        if status == 403:
            return DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the API key may not read {label} (Zotero: {said}). Check DOIGET_ZOTERO_API_KEY "
                f"and DOIGET_ZOTERO_LIBRARY; a key's access is shown at {KEYS_PAGE}.",
                details={"status": 403},
            )
        if status == 404:
            return DoigetError(
                ErrorCode.NOT_FOUND,
                f"{label} has no such object ({urlsplit(fetched.url).path}); search the "
                "library for its key.",
                details={"status": 404},
            )
        if status == 501 and self.library.local:
            return DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the Zotero desktop app's local API cannot {what} its library: it only reads. "
                + _WEB_FOR_WRITES.capitalize()
                + ".",
                details={"status": 501},
            )
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"Zotero refused to {what} {label} with HTTP {status} ({said}); not retried: the "
            "request would be refused again. Report it if it persists.",
            details={"status": status, "retryable": False},
        )

    def _write_refused(self, why: str) -> DoigetError:
        return DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"{why}. Create a key with write access to this library at {KEYS_PAGE} and set "
            "it as DOIGET_ZOTERO_API_KEY; nothing was written.",
            details={"status": 403},
        )

    def _writable(self, what: str) -> None:
        """Writes to an existing library go through the Web API only."""
        if self.library.local:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the Zotero desktop app cannot {what} its library for doiget: its local API "
                "only reads and its connector only saves new works (a note or tags on an "
                f"existing item are out of its reach); {_WEB_FOR_WRITES}.",
            )

    async def _create(
        self, path: str, objects: Sequence[Mapping[str, Any]], what: str
    ) -> WriteResult:
        self._writable(what)
        created: dict[int, str] = {}
        unchanged: dict[int, str] = {}
        failed: dict[int, str] = {}
        version = 0
        for first in range(0, len(objects), MAX_WRITE_OBJECTS):
            batch = [dict(item) for item in objects[first : first + MAX_WRITE_OBJECTS]]
            fetched = await self._send(
                "POST",
                self._library_url(path),
                headers={
                    "Content-Type": "application/json",
                    "Zotero-Write-Token": uuid.uuid4().hex,
                },
                body=_json_bytes(batch),
                what=what,
                conflict_ok=True,
            )
            if fetched.status == 412:
                # The token was used: this very write already reached Zotero (an answer
                # lost on the way back); writing it again would duplicate it.
                for index in range(len(batch)):
                    failed[first + index] = (
                        "Zotero already took this write (its write token was used); search "
                        "the library for it before writing it again"
                    )
                continue
            answer = self._object(fetched)
            version = max(version, _version_of(fetched))
            for bucket, kept in (("success", created), ("unchanged", unchanged)):
                for index, key in _indexed(answer.get(bucket)):
                    kept[first + index] = str(key)
            for index, failure in _indexed(answer.get("failed")):
                message = failure.get("message") if isinstance(failure, dict) else failure
                failed[first + index] = str(message)
        return WriteResult(created, unchanged, failed, version)

    async def _file_step(self, url: str, form: Mapping[str, str]) -> Fetched:
        return await self._send(
            "POST",
            url,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "If-None-Match": "*",
            },
            body=urlencode(form).encode(),
            what="add a file to",
        )

    async def _local_file(
        self, attachment: ZoteroItem, content_type: str, filename: str
    ) -> AttachmentFile:
        url = self._library_url(f"/items/{_key(attachment.key)}/file/view/url")
        fetched = await self._send("GET", url, what="read")
        location = fetched.text.strip()
        parts = urlsplit(location)
        if parts.scheme != "file":
            raise self._client.schema_drift("named an attachment's file with a non-file URL")
        path = Path(url2pathname(unquote(parts.path)))
        if not await anyio.Path(path).is_file():
            return AttachmentFile(
                attachment.key,
                content_type,
                filename,
                missing=(
                    f"its file is not at {path} (Zotero shows it as missing: sync the "
                    "library or relink the file in Zotero)"
                ),
            )
        return AttachmentFile(attachment.key, content_type, filename, path=str(path))

    async def _connector_post(
        self, endpoint: str, body: bytes, headers: Mapping[str, str]
    ) -> Fetched:
        assert self._connector is not None
        fetched = await self._send(
            "POST",
            f"{self._connector}/{endpoint}",
            headers=headers,
            body=body,
            what="save a work into",
        )
        if fetched.status == 200 and endpoint == "saveAttachment":
            # The app answers 200 (not 201) when the selected library's files are read-only.
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                "the Zotero desktop app saved the work but not its PDF: the library selected "
                "in Zotero does not allow files. Select My Library in Zotero and try again.",
            )
        return fetched

    async def _connector_target(self, collection: str) -> str:
        """The connector's id (``C<n>``) of the collection named ``collection`` (the
        connector knows collections by name and its own ids, not by key)."""
        fetched = await self._connector_post(
            "getSelectedCollection", b"{}", {"Content-Type": "application/json"}
        )
        targets = self._object(fetched).get("targets")
        if not isinstance(targets, list):
            raise self._client.schema_drift("listed no save targets")
        for target in targets:
            if not isinstance(target, dict) or not str(target.get("id", "")).startswith("C"):
                continue
            if target.get("name") == collection:
                return str(target["id"])
        names = sorted(
            str(t.get("name")) for t in targets if isinstance(t, dict) and t.get("level")
        )
        raise DoigetError(
            ErrorCode.NOT_FOUND,
            f"the Zotero desktop app has no collection named {collection!r}; nothing was "
            f"saved. Name one of: {', '.join(names) or '(none)'}, or create it in Zotero.",
        )

    async def _pages(self, path: str, params: Sequence[tuple[str, str]]) -> AsyncIterator[Fetched]:
        """Every page of a listing: the first as asked, then by ``start`` while Zotero's
        ``Link`` names a next page (or ``Total-Results`` says more remain)."""
        start = 0
        while True:
            pairs = [*params, ("start", str(start))] if start else list(params)
            fetched = await self._get(path, pairs)
            yield fetched
            count = _count(fetched)
            total = _total(fetched, start + count)
            start += count
            if count == 0 or (not _has_next(fetched) and start >= total):
                return

    async def _objects(
        self, path: str, params: Sequence[tuple[str, str]]
    ) -> AsyncIterator[dict[str, Any]]:
        """Every object of a listing, page after page."""
        async for fetched in self._pages(path, [*params, ("limit", str(PAGE_LIMIT))]):
            for raw in self._array(fetched):
                yield raw

    # -- reading answers -------------------------------------------------------------

    def _json(self, fetched: Fetched) -> Any:
        return self._client.json_of(fetched)

    def _object(self, fetched: Fetched) -> dict[str, Any]:
        value = self._json(fetched)
        if not isinstance(value, dict):
            raise self._client.schema_drift("answered with JSON that is not an object")
        return value

    def _array(self, fetched: Fetched) -> list[dict[str, Any]]:
        value = self._json(fetched)
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self._client.schema_drift("answered a listing that is not a list of objects")
        return cast(list[dict[str, Any]], value)

    def _item(self, raw: Mapping[str, Any]) -> ZoteroItem:
        data = raw.get("data")
        key = raw.get("key")
        if not isinstance(key, str) or not isinstance(data, dict):
            raise self._client.schema_drift("answered an item without its key and data")
        meta = _mapping(raw.get("meta"))
        csl = raw.get("csljson")
        children = meta.get("numChildren")
        return ZoteroItem(
            key=key,
            version=_int(raw.get("version", data.get("version"))),
            data=data,
            csl=csl if isinstance(csl, dict) else None,
            children=children if isinstance(children, int) else None,
        )


def open_api(settings: Any, network: Any) -> ZoteroApi | None:
    """The configured library's API (None when Zotero is not configured)."""
    zotero = settings.zotero
    if zotero.local_url is not None:
        client = network.client("zotero_local", endpoint=zotero.local_url)
        return ZoteroApi(
            LOCAL_LIBRARY,
            client,
            f"{zotero.local_url}/api",
            connector=f"{zotero.local_url}/connector",
        )
    if zotero.library is not None:
        kind, _, library_id = zotero.library.partition("/")
        library = LibraryRef("groups" if kind == "groups" else "users", library_id)
        key = settings.secret("DOIGET_ZOTERO_API_KEY")
        return ZoteroApi(library, network.client("zotero"), WEB_ROOT, key)
    return None


# -- helpers -------------------------------------------------------------------------


def _key(key: str | None) -> str:
    """An object key as it may appear in a path (Zotero keys are 8 letters and digits)."""
    text = str(key or "")
    if not text.isalnum() or not text.isascii() or len(text) > 32:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"{text!r} is not a Zotero key (8 letters and digits, like ABCD2345); search the "
            "library to find one.",
        )
    return text


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _version_of(fetched: Fetched) -> int:
    value = fetched.headers.get("last-modified-version", "")
    return int(value) if value.isdigit() else 0


def _total(fetched: Fetched, fallback: int) -> int:
    value = fetched.headers.get("total-results", "")
    return int(value) if value.isdigit() else fallback


def _count(fetched: Fetched) -> int:
    """How many objects one page held (a list, or a versions map)."""
    try:
        value = json.loads(fetched.content)
    except ValueError:
        return 0
    return len(value) if isinstance(value, list | dict) else 0


def _has_next(fetched: Fetched) -> bool:
    return 'rel="next"' in fetched.headers.get("link", "")


def _indexed(bucket: Any) -> list[tuple[int, Any]]:
    if not isinstance(bucket, dict):
        return []
    return [(int(index), value) for index, value in bucket.items() if str(index).isdigit()]


def _year_of(item: ZoteroItem) -> int | None:
    date = str(item.data.get("date") or "")
    digits = next((word for word in date.replace("/", "-").split("-") if len(word) == 4), "")
    return int(digits) if digits.isdigit() else None


def _annotation(item: ZoteroItem) -> Annotation | None:
    data = item.data
    kind = str(data.get("annotationType", ""))
    if item.item_type != "annotation" or kind not in ANNOTATION_TYPES or not item.parent:
        return None
    tags = tuple(str(tag.get("tag")) for tag in data.get("tags") or () if isinstance(tag, dict))
    return Annotation(
        key=item.key,
        version=item.version,
        attachment=item.parent,
        type=cast(AnnotationType, kind),
        text=str(data.get("annotationText") or ""),
        comment=str(data.get("annotationComment") or ""),
        color=str(data.get("annotationColor") or ""),
        page_label=str(data.get("annotationPageLabel") or ""),
        tags=tags,
        date_modified=_text_or_none(data.get("dateModified")),
    )


def _file_facts(path: Path) -> tuple[os.stat_result, str]:
    """The file's size and times, and its MD5 (what Zotero's upload authorisation asks)."""
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return path.stat(), digest.hexdigest()


async def _told(progress: PageProgress, done: int, total: int) -> None:
    said = progress(done, total)
    if said is not None:
        await said
