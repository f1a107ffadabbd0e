"""One Zotero library's requests, for the readers and writers built on it: the API
version on every request and the key only to api.zotero.org, Zotero's refusals said with
what to do next, listings paged by ``start`` with ``Total-Results`` and ``Link``, and
answers checked for their shape."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import urlencode, urlsplit

from doiget.errors import DoigetError, ErrorCode
from doiget.net.client import Fetched, SourceClient
from doiget.secret import Secret
from doiget.upstreams.zotero import API_HOST, KEY_HEADER
from doiget.zotero.models import LibraryRef, ZoteroItem

MAX_WRITE_OBJECTS: Final = 50
PAGE_LIMIT: Final = 100
API_VERSION: Final = "3"
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


class ZoteroTransport:
    """Sends one library's requests and reads their answers."""

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

    async def aclose(self) -> None:
        """Nothing of its own: the network owns the connections."""

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
        if not self.library.local and urlsplit(fetched.url).hostname != API_HOST:
            # Zotero's file storage, where an upload goes: the key plays no part there.
            return DoigetError(
                ErrorCode.NETWORK_ERROR,
                f"Zotero's file storage refused to {what} {label} with HTTP {status} "
                f"({said}); add the work again later: each try is authorised anew, and the "
                "item already written is found, not added twice.",
                details={"status": status, "retryable": True},
            )
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

    async def _pages(self, path: str, params: Sequence[tuple[str, str]]) -> AsyncIterator[Fetched]:
        """Every page of a listing: the first as asked, then by ``start`` while Zotero's
        ``Link`` names a next page (or ``Total-Results`` says more remain)."""
        start = 0
        while True:
            pairs = [*params, ("start", str(start))] if start else list(params)
            fetched = await self._get(path, pairs)
            yield fetched
            count = _count(fetched)
            total = total_of(fetched, start + count)
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
        meta = as_mapping(raw.get("meta"))
        csl = raw.get("csljson")
        children = meta.get("numChildren")
        return ZoteroItem(
            key=key,
            version=as_int(raw.get("version", data.get("version"))),
            data=data,
            csl=csl if isinstance(csl, dict) else None,
            children=children if isinstance(children, int) else None,
        )


def path_key(key: str | None) -> str:
    """An object key as it may appear in a path (Zotero keys are 8 letters and digits)."""
    text = str(key or "")
    if not text.isalnum() or not text.isascii() or len(text) > 32:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"{text!r} is not a Zotero key (8 letters and digits, like ABCD2345); search the "
            "library to find one.",
        )
    return text


def as_mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def version_of(fetched: Fetched) -> int:
    value = fetched.headers.get("last-modified-version", "")
    return int(value) if value.isdigit() else 0


def total_of(fetched: Fetched, fallback: int) -> int:
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
