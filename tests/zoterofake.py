"""A stateful fake Zotero: one library answering the Web API v3, the desktop app's local
API and its connector endpoints in Zotero's own response shapes.

:class:`FakeZotero` holds the library (items with notes, attachments and annotations,
nested collections, versions, a log of deletions, attachment files, API keys) and
answers :class:`FakeRequest` s with :class:`FakeAnswer` s. It is served two ways:

* :class:`LocalZoteroServer`, a plain-HTTP loopback server standing in for the desktop
  app (``/api/users/0/...`` read-only, ``/connector/...`` saves);
* mounted on the replay TLS upstream for ``api.zotero.org`` and the file hosts the Web
  API sends downloads and uploads to (:func:`mount_web`).

Shapes follow Zotero's documentation and the real payloads under
``tests/fixtures/zotero/`` (pyzotero's recorded responses; see the MANIFEST): every
object is ``{key, version, library, links, meta, data}``; listings carry
``Total-Results``, ``Link`` and ``Last-Modified-Version``; writes answer
``successful/success/unchanged/failed``. Switches inject what a live Zotero does under
load or contention: a 412 on the next writes, 429 with Retry-After, Backoff, and keys
that may only read.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ZOTERO_FIXTURES = FIXTURES / "zotero"

API_HOST = "api.zotero.org"
# Where the Web API redirects a file download to, and where it sends uploads.
FILES_HOST = "files.zotero.net"
UPLOAD_HOST = "zoterofilestorage.s3.amazonaws.com"
WEB_HOSTS = (API_HOST, FILES_HOST, UPLOAD_HOST)

USER_ID = "475425"
GROUP_ID = "2175430"
WRITE_KEY = "P9NiFoyLeZu2bZNvvuQPDWsd"
READ_KEY = "R3adOnlyKey0000000000000"
GROUP_KEY = "Gr0upWr1teKey00000000000"

KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
ANNOTATION_TYPES = ("highlight", "underline", "note", "image", "ink", "text")
ANNOTATION_COLORS = ("#ffd400", "#ff6666", "#5fb236", "#2ea8e5", "#a28ae5", "#e56eee")
WEB_PAGE_DEFAULT = 25
WEB_PAGE_MAX = 100
WRITE_MAX = 50


@dataclass(frozen=True)
class FakeRequest:
    """One request as Zotero receives it (``pairs`` keeps repeated parameters)."""

    host: str
    method: str
    path: str
    pairs: tuple[tuple[str, str], ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""

    @property
    def query(self) -> dict[str, str]:
        return dict(self.pairs)

    def all(self, name: str) -> list[str]:
        return [value for key, value in self.pairs if key == name]

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


@dataclass
class FakeAnswer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @classmethod
    def of_json(cls, data: Any, status: int = 200, **headers: str) -> FakeAnswer:
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        return cls(status, {"Content-Type": "application/json", **headers}, body)

    @classmethod
    def text(cls, status: int, message: str, **headers: str) -> FakeAnswer:
        return cls(status, {"Content-Type": "text/plain", **headers}, message.encode("utf-8"))


@dataclass
class KeyAccess:
    """What one API key may do: the user library and each group."""

    user: bool = True
    write: bool = True
    files: bool = True
    notes: bool = True
    groups: dict[str, bool] = field(default_factory=dict)  # group id -> may write


@dataclass
class Switches:
    """Faults to inject; each counter is spent as requests arrive."""

    # The next N item updates find the item changed meanwhile (answered 412).
    conflicts: int = 0
    # The next N requests are answered 429 with this Retry-After (seconds).
    rate_limited: int = 0
    retry_after: int = 1
    # The next N answers carry ``Backoff: backoff_seconds``.
    backoffs: int = 0
    backoff_seconds: int = 2


class FakeZotero:
    """One Zotero library (a user library, or ``group=True`` a group library)."""

    def __init__(self, *, group: bool = False, files_dir: Path | None = None) -> None:
        self.lock = threading.RLock()
        self.group = group
        self.library_id = GROUP_ID if group else USER_ID
        self.version = 0
        self.items: dict[str, dict[str, Any]] = {}
        self.collections: dict[str, dict[str, Any]] = {}
        self.collection_ids: dict[str, int] = {}
        self.deleted_items: dict[str, int] = {}
        self.deleted_collections: dict[str, int] = {}
        # Attachment key -> its file's bytes; None: the attachment has no file.
        self.files: dict[str, bytes | None] = {}
        self.uploads: dict[str, tuple[str, bytes | None]] = {}  # uploadKey -> (item, bytes)
        self.write_tokens: set[str] = set()
        self.keys: dict[str, KeyAccess] = {
            WRITE_KEY: KeyAccess(),
            READ_KEY: KeyAccess(write=False),
            GROUP_KEY: KeyAccess(user=False, groups={GROUP_ID: True}),
        }
        self.switches = Switches()
        # Off: the user has not allowed other applications to use the local API.
        self.local_api_enabled = True
        # A page size for keys/versions listings, for a server that pages them too.
        self.versions_page: int | None = None
        self.requests: list[FakeRequest] = []
        self.sessions: dict[str, list[str]] = {}
        # Connector session -> the connector's item ids -> the keys they were saved as.
        self.session_items: dict[str, dict[str, str]] = {}
        self.files_dir = files_dir
        self.local_port = 23119
        self._random = random.Random(f"zotero-{self.library_id}")

    # -- building the library ------------------------------------------------

    def new_key(self) -> str:
        while True:
            key = "".join(self._random.choices(KEY_ALPHABET, k=8))
            if key not in self.items and key not in self.collections:
                return key

    def _bump(self) -> int:
        self.version += 1
        return self.version

    def add_item(self, data: Mapping[str, Any], *, key: str | None = None) -> str:
        """Store ``data`` as a new item (one library version); return its key."""
        with self.lock:
            key = key or self.new_key()
            version = self._bump()
            stored = {"key": key, "version": version, **dict(data)}
            stored["key"], stored["version"] = key, version
            stored.setdefault("tags", [])
            stored.setdefault("relations", {})
            stored.setdefault("dateAdded", "2024-03-01T10:00:00Z")
            stored.setdefault("dateModified", stored["dateAdded"])
            if stored.get("itemType") not in ("attachment", "note", "annotation"):
                stored.setdefault("collections", [])
            self.items[key] = stored
            return key

    def add_collection(self, name: str, parent: str | None = None) -> str:
        with self.lock:
            key = self.new_key()
            version = self._bump()
            self.collections[key] = {
                "key": key,
                "version": version,
                "name": name,
                "parentCollection": parent or False,
                "relations": {},
            }
            self.collection_ids[key] = len(self.collection_ids) + 1
            return key

    def change(self, key: str, **fields: Any) -> None:
        """Edit an item as the researcher would in Zotero (a new version)."""
        with self.lock:
            item = self.items[key]
            item.update(fields)
            item["version"] = self._bump()

    def delete(self, key: str) -> None:
        """Delete an item (and its children) as the researcher would."""
        with self.lock:
            version = self._bump()
            for child in [k for k, d in self.items.items() if d.get("parentItem") == key]:
                self.items.pop(child)
                self.deleted_items[child] = version
            self.items.pop(key)
            self.files.pop(key, None)
            self.deleted_items[key] = version

    def add_pdf(self, parent: str, content: bytes | None, *, filename: str = "paper.pdf") -> str:
        """An imported PDF attachment of ``parent``; ``None`` content: its file is missing."""
        key = self.add_item(
            {
                "itemType": "attachment",
                "parentItem": parent,
                "linkMode": "imported_file",
                "title": "Full Text PDF",
                "contentType": "application/pdf",
                "charset": "",
                "filename": filename,
                "md5": hashlib.md5(content).hexdigest() if content else None,
                "mtime": 1709287200000 if content else None,
                "note": "",
                "url": "",
                "accessDate": "",
            }
        )
        self.files[key] = content
        return key

    def add_annotation(
        self, attachment: str, kind: str, *, text: str = "", comment: str = "", page: str = "1"
    ) -> str:
        index = ANNOTATION_TYPES.index(kind)
        data: dict[str, Any] = {
            "itemType": "annotation",
            "parentItem": attachment,
            "annotationType": kind,
            "annotationComment": comment,
            "annotationColor": ANNOTATION_COLORS[index],
            "annotationPageLabel": page,
            "annotationSortIndex": f"{int(page) - 1 if page.isdigit() else 0:05d}|000120|00000",
            "annotationPosition": json.dumps(
                {"pageIndex": int(page) - 1 if page.isdigit() else 0, "rects": [[10, 20, 30, 40]]}
            ),
        }
        if kind in ("highlight", "underline"):
            data["annotationText"] = text
        return self.add_item(data)

    def add_note(self, parent: str, html: str) -> str:
        return self.add_item({"itemType": "note", "parentItem": parent, "note": html})

    def bulk(self, count: int, *, collection: str | None = None) -> list[str]:
        """``count`` plain journal articles (for paging and sync at scale)."""
        made = []
        for n in range(count):
            made.append(
                self.add_item(
                    {
                        "itemType": "journalArticle",
                        "title": f"Generated article {n:05d} on measurement",
                        "creators": [
                            {"creatorType": "author", "firstName": "Ada", "lastName": f"Author{n}"}
                        ],
                        "date": str(1990 + n % 35),
                        "DOI": f"10.5555/gen.{n:05d}",
                        "publicationTitle": "Journal of Generated Results",
                        "collections": [collection] if collection else [],
                    }
                )
            )
        return made

    # -- answering -------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeAnswer:
        with self.lock:
            self.requests.append(request)
            answer = self._answer(request)
            if self.switches.backoffs > 0 and request.host != "127.0.0.1":
                self.switches.backoffs -= 1
                answer.headers["Backoff"] = str(self.switches.backoff_seconds)
            answer.headers.setdefault("Zotero-API-Version", "3")
            return answer

    def requests_to(self, path_part: str) -> list[FakeRequest]:
        with self.lock:
            return [r for r in self.requests if path_part in r.path]

    def _answer(self, request: FakeRequest) -> FakeAnswer:
        if self.switches.rate_limited > 0:
            self.switches.rate_limited -= 1
            return FakeAnswer.text(
                429, "Too Many Requests", **{"Retry-After": str(self.switches.retry_after)}
            )
        if request.host == FILES_HOST:
            return self._serve_file(request)
        if request.host == UPLOAD_HOST:
            return self._receive_upload(request)
        if request.path.startswith("/connector/"):
            return self._connector(request)
        local = request.path.startswith("/api/")
        path = request.path[len("/api") :] if local else request.path
        if local and not self.local_api_enabled:
            return FakeAnswer.text(403, "Local API is not enabled")
        if local and request.method != "GET":
            return FakeAnswer.text(501, "Write access is not yet supported")
        if path == "/keys/current" and not local:
            return self._key_info(request)
        prefix = self._library_prefix(path, local)
        if prefix is None:
            return FakeAnswer.text(404, "Not found")
        if not local:
            refused = self._refused(request, prefix)
            if refused is not None:
                return refused
        rest = path[len(prefix) :]
        return self._library(request, rest, local)

    def _library_prefix(self, path: str, local: bool) -> str | None:
        own = f"/groups/{self.library_id}" if self.group else f"/users/{self.library_id}"
        for prefix in (own, "/users/0") if local else (own,):
            if path == prefix or path.startswith(prefix + "/"):
                return prefix
        return None

    def _key_of(self, request: FakeRequest) -> str | None:
        auth = request.header("authorization") or ""
        if auth.startswith("Bearer "):
            return auth[len("Bearer ") :]
        return request.header("zotero-api-key") or request.query.get("key")

    def _refused(self, request: FakeRequest, prefix: str) -> FakeAnswer | None:
        key = self._key_of(request)
        access = self.keys.get(key or "")
        if access is None:
            return FakeAnswer.text(403, "Forbidden")
        if self.group:
            if self.library_id not in access.groups:
                return FakeAnswer.text(403, "Forbidden")
            may_write = access.groups[self.library_id]
        else:
            if not access.user:
                return FakeAnswer.text(403, "Forbidden")
            may_write = access.write
        if request.method != "GET" and not may_write:
            return FakeAnswer.text(403, "Write access denied")
        return None

    def _key_info(self, request: FakeRequest) -> FakeAnswer:
        key = self._key_of(request)
        access = self.keys.get(key or "")
        if access is None:
            return FakeAnswer.text(403, "Invalid key")
        groups: dict[str, Any] = {
            gid: {"library": True, "write": write} for gid, write in access.groups.items()
        }
        body: dict[str, Any] = {
            "key": key,
            "userID": int(USER_ID),
            "username": "z_public_library",
            "displayName": "Zoë Public",
            "access": {},
        }
        if access.user:
            body["access"]["user"] = {
                "library": True,
                "files": access.files,
                "notes": access.notes,
                "write": access.write,
            }
        if groups:
            body["access"]["groups"] = groups
        return FakeAnswer.of_json(body)

    # -- library routes ----------------------------------------------------------

    def _library(self, request: FakeRequest, rest: str, local: bool) -> FakeAnswer:
        parts = [p for p in rest.split("/") if p]
        method = request.method
        if parts == ["deleted"] and not local and method == "GET":
            return self._deleted(request)
        if parts[:1] == ["collections"]:
            if len(parts) == 1 and method == "GET":
                return self._listing(request, list(self.collections.values()), local, "collection")
            if len(parts) == 1 and method == "POST":
                return self._create(request, "collection")
            if len(parts) >= 3 and parts[2] == "items" and method == "GET":
                key = parts[1]
                if key not in self.collections:
                    return FakeAnswer.text(404, "Collection not found")
                items = [
                    d
                    for d in self.items.values()
                    if key in d.get("collections", ()) and d.get("itemType") != "annotation"
                ]
                if parts[3:] == ["top"]:
                    items = [d for d in items if not d.get("parentItem")]
                return self._items_listing(request, items, local)
            if len(parts) == 2 and method == "GET":
                collection = self.collections.get(parts[1])
                if collection is None:
                    return FakeAnswer.text(404, "Not found")
                return self._single(collection, local, "collection")
            return FakeAnswer.text(405, "Method not allowed")
        if parts[:1] != ["items"]:
            return FakeAnswer.text(404, "Not found")
        if len(parts) == 1:
            if method == "GET":
                return self._items_listing(request, list(self.items.values()), local)
            if method == "POST":
                return self._create(request, "item")
            return FakeAnswer.text(405, "Method not allowed")
        if parts[1] == "top" and method == "GET":
            top = [d for d in self.items.values() if not d.get("parentItem")]
            return self._items_listing(request, top, local)
        key = parts[1]
        item = self.items.get(key)
        if item is None:
            return FakeAnswer.text(404, "Not found")
        tail = parts[2:]
        if not tail:
            if method == "GET":
                return self._single(item, local, "item", request.query.get("include", "data"))
            if method in ("PATCH", "PUT"):
                return self._update(request, item)
            return FakeAnswer.text(405, "Method not allowed")
        if tail == ["children"] and method == "GET":
            children = [d for d in self.items.values() if d.get("parentItem") == key]
            return self._items_listing(request, children, local)
        if tail[0] == "file":
            if local:
                return self._local_file(item, tail)
            if method == "GET" and tail == ["file"]:
                return self._web_file(item)
            if method == "POST" and tail == ["file"]:
                return self._upload_step(request, item)
        return FakeAnswer.text(404, "Not found")

    # -- reading ---------------------------------------------------------------

    def _library_json(self) -> dict[str, Any]:
        kind = "group" if self.group else "user"
        name = "Zotero Ünïcode Group" if self.group else "z_public_library"
        return {
            "type": kind,
            "id": int(self.library_id),
            "name": name,
            "links": {"alternate": {"href": f"https://www.zotero.org/{name}", "type": "text/html"}},
        }

    def _base(self, local: bool) -> str:
        lib = f"{'groups' if self.group else 'users'}/{self.library_id}"
        if local:
            return f"http://localhost:{self.local_port}/api/{lib}"
        return f"https://{API_HOST}/{lib}"

    def _object(self, data: dict[str, Any], local: bool, kind: str, include: str) -> dict:
        key = data["key"]
        noun = "collections" if kind == "collection" else "items"
        links: dict[str, Any] = {
            "self": {"href": f"{self._base(local)}/{noun}/{key}", "type": "application/json"},
            "alternate": {
                "href": f"https://www.zotero.org/z_public_library/{noun}/{key}",
                "type": "text/html",
            },
        }
        meta: dict[str, Any] = {}
        if kind == "collection":
            meta["numCollections"] = sum(
                1 for c in self.collections.values() if c["parentCollection"] == key
            )
            meta["numItems"] = sum(
                1 for d in self.items.values() if key in d.get("collections", ())
            )
        else:
            if data.get("parentItem"):
                links["up"] = {
                    "href": f"{self._base(local)}/items/{data['parentItem']}",
                    "type": "application/json",
                }
            if data.get("itemType") == "attachment" and self.files.get(key):
                links["enclosure"] = {
                    "href": f"{self._base(local)}/items/{key}/file/view",
                    "type": data.get("contentType", "application/octet-stream"),
                    "title": data.get("filename", ""),
                    "length": len(self.files[key] or b""),
                }
            if data.get("itemType") not in ("attachment", "note", "annotation"):
                meta["creatorSummary"] = _creator_summary(data.get("creators", []))
                if data.get("date"):
                    meta["parsedDate"] = str(data["date"])[:10]
                meta["numChildren"] = sum(
                    1 for d in self.items.values() if d.get("parentItem") == key
                )
        obj: dict[str, Any] = {
            "key": key,
            "version": data["version"],
            "library": self._library_json(),
            "links": links,
            "meta": meta,
        }
        wanted = include.split(",")
        if "data" in wanted:
            obj["data"] = json.loads(json.dumps(data))
        if "csljson" in wanted and kind == "item":
            obj["csljson"] = _csl(data, self.library_id)
        return obj

    def _single(
        self, data: dict[str, Any], local: bool, kind: str, include: str = "data"
    ) -> FakeAnswer:
        body = self._object(data, local, kind, include)
        return FakeAnswer.of_json(body, **{"Last-Modified-Version": str(data["version"])})

    def _items_listing(
        self, request: FakeRequest, items: list[dict[str, Any]], local: bool
    ) -> FakeAnswer:
        query = request.query
        if "itemKey" in query:
            wanted = set(query["itemKey"].split(","))
            if len(wanted) > WRITE_MAX and not local:
                return FakeAnswer.text(400, "Only 50 keys may be given with itemKey")
            items = [d for d in items if d["key"] in wanted]
        for expression in request.all("itemType"):
            items = [d for d in items if _matches(expression, str(d.get("itemType", "")))]
        for expression in request.all("tag"):
            items = [
                d for d in items if _matches_any(expression, [t["tag"] for t in d.get("tags", [])])
            ]
        if query.get("q"):
            everything = query.get("qmode") == "everything"
            items = [d for d in items if _quick_match(d, query["q"], everything)]
        return self._listing(request, items, local, "item")

    def _listing(
        self, request: FakeRequest, objects: list[dict[str, Any]], local: bool, kind: str
    ) -> FakeAnswer:
        query = request.query
        since = int(query.get("since") or 0)
        if since:
            objects = [o for o in objects if o["version"] > since]
        objects = sorted(objects, key=lambda o: (-o["version"], o["key"]))
        total = len(objects)
        start = int(query.get("start") or 0)
        fmt = query.get("format", "json")
        if local or (fmt in ("versions", "keys") and self.versions_page is None):
            # The local app pages nothing unless asked; the Web API sends every key
            # of a keys/versions listing at once.
            limit = int(query.get("limit") or 0) or max(total - start, 0)
        elif fmt in ("versions", "keys"):
            limit = min(int(query.get("limit") or self.versions_page or 0), WEB_PAGE_MAX)
        else:
            limit = min(int(query.get("limit") or WEB_PAGE_DEFAULT), WEB_PAGE_MAX)
        page = objects[start : start + limit]
        headers = {
            "Total-Results": str(total),
            "Last-Modified-Version": str(self.version),
            "Link": _links(request, self._base(local), start, limit, total, local),
        }
        if fmt == "versions":
            return FakeAnswer.of_json({o["key"]: o["version"] for o in page}, **headers)
        if fmt == "keys":
            body = "\n".join(o["key"] for o in page)
            return FakeAnswer.text(200, body + "\n", **headers)
        include = query.get("include", "data")
        body = [self._object(o, local, kind, include) for o in page]
        return FakeAnswer.of_json(body, **headers)

    def _deleted(self, request: FakeRequest) -> FakeAnswer:
        since = int(request.query.get("since") or 0)
        body = {
            "collections": [k for k, v in self.deleted_collections.items() if v > since],
            "searches": [],
            "items": [k for k, v in self.deleted_items.items() if v > since],
            "tags": [],
            "settings": [],
        }
        return FakeAnswer.of_json(body, **{"Last-Modified-Version": str(self.version)})

    def _local_file(self, item: dict[str, Any], tail: list[str]) -> FakeAnswer:
        if item.get("itemType") != "attachment" or not str(item.get("linkMode", "")).startswith(
            "imported"
        ):
            return FakeAnswer.text(400, f"Not a file attachment: {item['key']}")
        assert self.files_dir is not None, "a local fake needs files_dir"
        path = self.files_dir / "storage" / item["key"] / str(item.get("filename") or "file")
        content = self.files.get(item["key"])
        if content is not None and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        url = path.as_uri()
        if tail[-1] == "url":
            return FakeAnswer.text(200, url)
        return FakeAnswer(302, {"Location": url})

    def _web_file(self, item: dict[str, Any]) -> FakeAnswer:
        content = self.files.get(item["key"])
        if item.get("itemType") != "attachment" or content is None:
            return FakeAnswer.text(404, "Not found")
        digest = hashlib.md5(content).hexdigest()
        filename = quote(str(item.get("filename") or "file"))
        location = f"https://{FILES_HOST}/{digest}/{filename}?key={item['key']}"
        return FakeAnswer(302, {"Location": location})

    def _serve_file(self, request: FakeRequest) -> FakeAnswer:
        content = self.files.get(request.query.get("key", ""))
        if content is None:
            return FakeAnswer.text(404, "Not found")
        return FakeAnswer(200, {"Content-Type": "application/pdf"}, content)

    # -- writing -------------------------------------------------------------------

    def _precondition(self, request: FakeRequest, current: int) -> FakeAnswer | None:
        since = request.header("if-unmodified-since-version")
        if since is not None and int(since) < current:
            return FakeAnswer.text(
                412,
                f"Library has been modified since specified version (expected {since}, "
                f"found {current})",
                **{"Last-Modified-Version": str(self.version)},
            )
        return None

    def _create(self, request: FakeRequest, kind: str) -> FakeAnswer:
        token = request.header("zotero-write-token")
        if token is not None:
            if token in self.write_tokens:
                return FakeAnswer.text(412, "Write token already used")
            self.write_tokens.add(token)
        refused = self._precondition(request, self.version)
        if refused is not None:
            return refused
        objects = request.json()
        if not isinstance(objects, list):
            return FakeAnswer.text(400, "Uploaded data must be a JSON array")
        if len(objects) > WRITE_MAX:
            return FakeAnswer.text(
                413, f"Only {WRITE_MAX} objects can be saved in a single request"
            )
        successful: dict[str, Any] = {}
        success: dict[str, str] = {}
        failed: dict[str, Any] = {}
        version = self.version + 1
        for index, data in enumerate(objects):
            problem = self._invalid(data, kind)
            if problem is not None:
                failed[str(index)] = {"key": data.get("key", ""), "code": 400, "message": problem}
                continue
            key = self.new_key()
            stored = {k: v for k, v in data.items() if k not in ("key", "version")}
            stored.update({"key": key, "version": version})
            if kind == "collection":
                stored.setdefault("parentCollection", False)
                stored.setdefault("relations", {})
                self.collections[key] = stored
                self.collection_ids[key] = len(self.collection_ids) + 1
            else:
                stored.setdefault("tags", [])
                stored.setdefault("relations", {})
                stored.setdefault("dateAdded", "2026-11-27T12:00:00Z")
                stored.setdefault("dateModified", stored["dateAdded"])
                if stored.get("itemType") not in ("attachment", "note", "annotation"):
                    stored.setdefault("collections", [])
                self.items[key] = stored
            successful[str(index)] = self._object(stored, False, kind, "data")
            success[str(index)] = key
        if success:
            self.version = version
        body = {"successful": successful, "success": success, "unchanged": {}, "failed": failed}
        return FakeAnswer.of_json(body, **{"Last-Modified-Version": str(self.version)})

    def _invalid(self, data: Any, kind: str) -> str | None:
        if not isinstance(data, dict):
            return "Object is not a JSON object"
        if kind == "collection":
            return None if data.get("name") else "Collection name cannot be empty"
        item_type = data.get("itemType")
        if not item_type:
            return "'itemType' property not provided"
        parent = data.get("parentItem")
        if parent and parent not in self.items:
            return f"Parent item {parent} not found"
        for collection in data.get("collections", ()):
            if collection not in self.collections:
                return f"Collection {collection} doesn't exist"
        return None

    def _update(self, request: FakeRequest, item: dict[str, Any]) -> FakeAnswer:
        if self.switches.conflicts > 0:
            self.switches.conflicts -= 1
            # Someone changed the item meanwhile: it has moved on.
            item["version"] = self._bump()
            item["dateModified"] = "2026-11-27T12:30:00Z"
        change = request.json()
        given = request.header("if-unmodified-since-version") or change.get("version")
        if given is None:
            return FakeAnswer.text(428, "If-Unmodified-Since-Version not provided")
        if int(given) < item["version"]:
            return FakeAnswer.text(
                412,
                f"Item has been modified since specified version (expected {given}, found "
                f"{item['version']})",
                **{"Last-Modified-Version": str(self.version)},
            )
        change = {k: v for k, v in change.items() if k not in ("key", "version")}
        if request.method == "PUT":
            kept = {k: item[k] for k in ("key", "dateAdded") if k in item}
            item.clear()
            item.update(kept)
        item.update(change)
        item["version"] = self._bump()
        return FakeAnswer(204, {"Last-Modified-Version": str(self.version)})

    def _upload_step(self, request: FakeRequest, item: dict[str, Any]) -> FakeAnswer:
        if request.header("if-none-match") != "*" and request.header("if-match") is None:
            return FakeAnswer.text(428, "If-Match/If-None-Match header not provided")
        form = dict(parse_qsl(request.body.decode("utf-8")))
        if "upload" in form:
            target, content = self.uploads.pop(form["upload"], (None, None))
            if target != item["key"] or content is None:
                return FakeAnswer.text(400, "Upload key not found")
            self.files[item["key"]] = content
            item["md5"] = hashlib.md5(content).hexdigest()
            item["version"] = self._bump()
            return FakeAnswer(204, {"Last-Modified-Version": str(self.version)})
        if item.get("md5") and item.get("md5") == form.get("md5") and self.files.get(item["key"]):
            return FakeAnswer.of_json({"exists": 1})
        for existing in self.files.values():
            if existing is not None and hashlib.md5(existing).hexdigest() == form.get("md5"):
                self.files[item["key"]] = existing
                item["md5"] = form["md5"]
                item["version"] = self._bump()
                return FakeAnswer.of_json({"exists": 1})
        upload_key = uuid.uuid4().hex
        self.uploads[upload_key] = (item["key"], None)
        boundary = "---------------------------" + upload_key[:12]
        prefix = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n'
            f"{form.get('md5')}\r\n--{boundary}\r\nContent-Disposition: form-data; "
            f'name="file"; filename="{form.get("filename")}"\r\n\r\n'
        )
        body = {
            "url": f"https://{UPLOAD_HOST}/",
            "contentType": f"multipart/form-data; boundary={boundary}",
            "prefix": prefix,
            "suffix": f"\r\n--{boundary}--",
            "uploadKey": upload_key,
        }
        return FakeAnswer.of_json(body)

    def _receive_upload(self, request: FakeRequest) -> FakeAnswer:
        if request.method != "POST":
            return FakeAnswer.text(405, "Method not allowed")
        for upload_key, (item_key, _) in list(self.uploads.items()):
            boundary = "---------------------------" + upload_key[:12]
            if boundary.encode() in request.body[:400]:
                _, _, rest = request.body.partition(b"\r\n\r\n")
                _, _, rest = rest.partition(b"\r\n\r\n")
                content = rest[: rest.rfind(f"\r\n--{boundary}--".encode())]
                self.uploads[upload_key] = (item_key, content)
                return FakeAnswer(201, {})
        return FakeAnswer.text(400, "Malformed upload")

    # -- the connector (desktop app) ----------------------------------------------

    def _connector(self, request: FakeRequest) -> FakeAnswer:
        if request.method != "POST":
            return FakeAnswer.text(400, "Endpoint does not support method")
        name = request.path[len("/connector/") :]
        if name == "ping":
            return FakeAnswer(200, {"Content-Type": "text/html"}, b"Zotero is running")
        if name == "getSelectedCollection":
            targets = [{"id": "L1", "name": "My Library", "filesEditable": True, "level": 0}]
            targets += [
                {
                    "id": f"C{self.collection_ids[key]}",
                    "name": c["name"],
                    "filesEditable": True,
                    "level": self._depth(key) + 1,
                }
                for key, c in self.collections.items()
            ]
            body = {
                "libraryID": 1,
                "libraryName": "My Library",
                "libraryEditable": True,
                "filesEditable": True,
                "editable": True,
                "id": None,
                "name": "My Library",
                "targets": targets,
            }
            return FakeAnswer.of_json(body)
        if name == "saveItems":
            data = request.json()
            session = data.get("sessionID")
            if session in self.sessions:
                return FakeAnswer.of_json({"error": "SESSION_EXISTS"}, 409)
            saved = []
            for connector_item in data.get("items", []):
                fields = {
                    k: v
                    for k, v in connector_item.items()
                    if k not in ("id", "attachments", "notes")
                }
                key = self.add_item(fields)
                saved.append(key)
                for note in connector_item.get("notes", []):
                    self.add_note(key, note.get("note", ""))
            self.sessions[session] = saved
            self.session_items[session] = {
                str(i.get("id")): k for i, k in zip(data.get("items", []), saved, strict=True)
            }
            return FakeAnswer(201, {"Content-Type": "application/json"})
        if name == "saveAttachment":
            metadata = json.loads(request.header("x-metadata") or "{}")
            session = metadata.get("sessionID")
            parent = self.session_items.get(session, {}).get(str(metadata.get("parentItemID")))
            if parent is None:
                return FakeAnswer.of_json({"error": "SESSION_NOT_FOUND"}, 400)
            key = self.add_pdf(parent, request.body, filename="attachment.pdf")
            self.items[key]["title"] = metadata.get("title", "")
            self.items[key]["url"] = metadata.get("url", "")
            return FakeAnswer(201, {})
        if name == "updateSession":
            data = request.json()
            keys = self.sessions.get(data.get("sessionID"))
            if keys is None:
                return FakeAnswer.of_json({"error": "SESSION_NOT_FOUND"}, 400)
            target = str(data.get("target", ""))
            if target.startswith("C"):
                by_id = {f"C{v}": k for k, v in self.collection_ids.items()}
                collection = by_id.get(target)
                if collection is None:
                    return FakeAnswer.of_json({"error": "COLLECTION_NOT_FOUND"}, 400)
                for key in keys:
                    self.change(key, collections=[collection])
            tags = [t.strip() for t in str(data.get("tags") or "").split(",") if t.strip()]
            for key in keys:
                if tags:
                    self.change(key, tags=[{"tag": t} for t in tags])
            return FakeAnswer.of_json({})
        return FakeAnswer.text(404, "No endpoint found")

    def _depth(self, key: str) -> int:
        depth = 0
        parent = self.collections[key]["parentCollection"]
        while parent:
            depth += 1
            parent = self.collections[parent]["parentCollection"]
        return depth


# -- the seeded library ----------------------------------------------------------


@dataclass(frozen=True)
class Seeded:
    """Keys of the seeded library's notable objects."""

    article: str  # DOI, non-ASCII title and creators, Better BibTeX key in extra
    book: str  # pyzotero's recorded book item
    preprint: str  # arXiv id, Zotero's own citationKey field
    pdf: str  # the article's PDF (with a file)
    missing_pdf: str  # the book's PDF attachment whose file is missing
    note: str  # a child note of the article
    annotations: dict[str, str]  # annotation type -> key
    reading: str  # collection "Reading"
    methods: str  # collection "Méthodes", nested under "Reading"
    pdf_bytes: bytes


def seed(fake: FakeZotero, pdf_bytes: bytes | None = None) -> Seeded:
    """The standard test library: real recorded payloads plus the cases tests need."""
    pdf_bytes = pdf_bytes or _sample_pdf()
    recorded_collections = json.loads(
        (ZOTERO_FIXTURES / "pyzotero-collections_doc.json").read_text("utf-8")
    )
    reading = fake.add_collection("Reading")
    methods = fake.add_collection("Méthodes", parent=reading)
    for recorded in recorded_collections[:3]:
        fake.add_collection(recorded["data"]["name"])
    article = fake.add_item(
        {
            "itemType": "journalArticle",
            "title": "Über die Quantenmechanik der Ströme — 量子輸送",
            "creators": [
                {"creatorType": "author", "firstName": "Erwin", "lastName": "Schrödinger"},
                {"creatorType": "author", "firstName": "Jan", "lastName": "Łukasiewicz"},
                {"creatorType": "author", "name": "東京大学 物理学教室"},
            ],
            "publicationTitle": "Annalen der Physik",
            "volume": "384",
            "pages": "361-376",
            "date": "1926",
            "DOI": "10.1002/andp.19263840404",
            "extra": "Citation Key: schrodinger1926quant",
            "tags": [{"tag": "quantum"}, {"tag": "to-read", "type": 1}],
            "collections": [reading],
        }
    )
    recorded_book = json.loads((ZOTERO_FIXTURES / "pyzotero-item_doc.json").read_text("utf-8"))
    book_data = {k: v for k, v in recorded_book["data"].items() if k not in ("key", "version")}
    book_data["collections"] = [methods]
    book = fake.add_item(book_data)
    preprint = fake.add_item(
        {
            "itemType": "preprint",
            "title": "Attention Is All You Need",
            "creators": [
                {"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"},
                {"creatorType": "author", "firstName": "Noam", "lastName": "Shazeer"},
            ],
            "repository": "arXiv",
            "archiveID": "arXiv:1706.03762",
            "url": "http://arxiv.org/abs/1706.03762",
            "date": "2017-06-12",
            "citationKey": "vaswani2017attention",
            "tags": [{"tag": "transformers"}],
        }
    )
    pdf = fake.add_pdf(article, pdf_bytes, filename="Schrödinger 1926.pdf")
    missing_pdf = fake.add_pdf(book, None, filename="missing.pdf")
    note = fake.add_note(
        article, "<p>Reading note: the wave equation on p. 362 — <b>key</b> result.</p>"
    )
    annotations = {
        kind: fake.add_annotation(
            pdf,
            kind,
            text=f"Passage marked by a {kind} — «ünïcode»"
            if kind in ("highlight", "underline")
            else "",
            comment=f"{kind} comment",
            page=str(2 + n),
        )
        for n, kind in enumerate(ANNOTATION_TYPES)
    }
    return Seeded(
        article=article,
        book=book,
        preprint=preprint,
        pdf=pdf,
        missing_pdf=missing_pdf,
        note=note,
        annotations=annotations,
        reading=reading,
        methods=methods,
        pdf_bytes=pdf_bytes,
    )


def _sample_pdf() -> bytes:
    return (FIXTURES / "pdf" / "colrev-SrivastavaShainesh2015-stub.pdf").read_bytes()


# -- serving ---------------------------------------------------------------------


class LocalZoteroServer:
    """The desktop app's HTTP server on a loopback port (plain HTTP, like Zotero's)."""

    def __init__(self, fake: FakeZotero) -> None:
        self.fake = fake
        handler = type("_Bound", (_LocalHandler,), {"fake": fake})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        fake.local_port = self.port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LocalZoteroServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _LocalHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeZotero

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        request = FakeRequest(
            host="127.0.0.1",
            method=self.command,
            path=parts.path,
            pairs=tuple(parse_qsl(parts.query, keep_blank_values=True)),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
        )
        answer = self.fake.handle(request)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)


def mount_web(upstream: Any, fake: FakeZotero) -> None:
    """Answer api.zotero.org and Zotero's file hosts on the replay upstream from ``fake``."""
    from replay import Reply

    def answer(recorded: Any) -> Any:
        request = FakeRequest(
            host=recorded.host,
            method=recorded.method,
            path=recorded.path,
            pairs=tuple(parse_qsl(recorded.raw_query, keep_blank_values=True)),
            headers=recorded.headers,
            body=recorded.body,
        )
        got = fake.handle(request)
        return Reply(got.status, got.body, got.headers)

    for host in WEB_HOSTS:
        upstream.mount(host, answer)


def web_env(*, library: str | None = None, key: str = WRITE_KEY, write: str = "on") -> dict:
    """The settings that point doiget at the fake Web API library."""
    return {
        "DOIGET_ZOTERO_LIBRARY": library or f"users/{USER_ID}",
        "DOIGET_ZOTERO_API_KEY": key,
        "DOIGET_ZOTERO_WRITE": write,
    }


# -- helpers -----------------------------------------------------------------------


def _links(request: FakeRequest, base: str, start: int, limit: int, total: int, local: bool) -> str:
    host = (
        f"http://localhost:{base.split(':')[2].split('/')[0]}" if local else f"https://{API_HOST}"
    )
    path = request.path

    def url(new_start: int) -> str:
        pairs = [(k, v) for k, v in request.pairs if k != "start"]
        if new_start > 0:
            pairs.append(("start", str(new_start)))
        query = urlencode(pairs)
        return f"{host}{path}" + (f"?{query}" if query else "")

    links: list[tuple[str, str]] = []
    if start:
        links.append(("first", url(0)))
        links.append(("prev", url(max(start - limit, 0))))
    if limit and start + limit < total:
        links.append(("next", url(start + limit)))
    if limit:
        last = total - total % limit if total % limit else max(total - limit, 0)
        links.append(("last", url(last)))
    links.append(("alternate", "https://www.zotero.org/z_public_library/items"))
    return ", ".join(f'<{target}>; rel="{rel}"' for rel, target in links)


def _matches(expression: str, value: str) -> bool:
    negate = expression.startswith("-")
    options = [o.strip() for o in expression.lstrip("-").split("||")]
    found = value in options
    return not found if negate else found


def _matches_any(expression: str, values: Iterable[str]) -> bool:
    negate = expression.startswith("-")
    options = {o.strip() for o in expression.lstrip("-").split("||")}
    found = bool(options & set(values))
    return not found if negate else found


def _quick_match(data: Mapping[str, Any], q: str, everything: bool) -> bool:
    words = [str(data.get("title", "")), str(data.get("date", ""))]
    for creator in data.get("creators", []):
        words += [
            creator.get("lastName", ""),
            creator.get("firstName", ""),
            creator.get("name", ""),
        ]
    if everything:
        words += [str(v) for v in data.values() if isinstance(v, str)]
    haystack = " ".join(words).casefold()
    return q.casefold() in haystack


def _creator_summary(creators: list[dict[str, Any]]) -> str:
    names = [c.get("lastName") or c.get("name", "") for c in creators]
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


CSL_TYPES = {
    "journalArticle": "article-journal",
    "book": "book",
    "preprint": "article",
    "conferencePaper": "paper-conference",
    "bookSection": "chapter",
    "thesis": "thesis",
    "report": "report",
    "webpage": "webpage",
}


def _csl(data: Mapping[str, Any], library_id: str) -> dict[str, Any]:
    """Zotero's CSL-JSON export of an item, for the fields the fake library uses."""
    csl: dict[str, Any] = {
        "id": f"{library_id}/{data['key']}",
        "type": CSL_TYPES.get(str(data.get("itemType")), "document"),
        "title": data.get("title", ""),
    }
    authors = []
    for creator in data.get("creators", []):
        if "name" in creator:
            authors.append({"literal": creator["name"]})
        else:
            authors.append(
                {"family": creator.get("lastName", ""), "given": creator.get("firstName", "")}
            )
    if authors:
        csl["author"] = authors
    for field_name, csl_name in (
        ("DOI", "DOI"),
        ("ISBN", "ISBN"),
        ("publicationTitle", "container-title"),
        ("volume", "volume"),
        ("pages", "page"),
        ("publisher", "publisher"),
        ("url", "URL"),
    ):
        if data.get(field_name):
            csl[csl_name] = data[field_name]
    date = str(data.get("date") or "")
    if date[:4].isdigit():
        parts = [int(p) for p in date[:10].split("-") if p.isdigit()]
        csl["issued"] = {"date-parts": [parts]}
    if data.get("citationKey"):
        csl["citation-key"] = data["citationKey"]
    return csl


@dataclass
class ZoteroWorld:
    """A seeded fake library and the settings that point doiget at it."""

    fake: FakeZotero
    seeded: Seeded
    env: dict[str, str]


def local_world(files_dir: Path) -> tuple[ZoteroWorld, LocalZoteroServer]:
    """A seeded library served as the desktop app on a loopback port (caller stops it)."""
    fake = FakeZotero(files_dir=files_dir)
    server = LocalZoteroServer(fake).start()
    seeded = seed(fake)
    return ZoteroWorld(fake, seeded, {"DOIGET_ZOTERO_LOCAL": server.url}), server


def web_world(upstream: Any, *, group: bool = False) -> ZoteroWorld:
    """A seeded library answering as api.zotero.org on the replay upstream."""
    fake = FakeZotero(group=group)
    mount_web(upstream, fake)
    seeded = seed(fake)
    library = f"groups/{GROUP_ID}" if group else f"users/{USER_ID}"
    key = GROUP_KEY if group else WRITE_KEY
    return ZoteroWorld(fake, seeded, web_env(library=library, key=key))
