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

The requests are in :mod:`.transport`, reading in :mod:`.reading`, writing in
:mod:`.writing`, files in :mod:`.files` and the connector in :mod:`.connector`.
"""

from __future__ import annotations

from typing import Any, Final

from doiget.errors import DoigetError, ErrorCode
from doiget.installed import ZOTERO_SETUP
from doiget.upstreams.zotero import API_HOST
from doiget.zotero.connector import ZoteroConnector
from doiget.zotero.files import ZoteroFiles
from doiget.zotero.models import LibraryRef
from doiget.zotero.reading import ItemQuery
from doiget.zotero.transport import MAX_WRITE_OBJECTS, PAGE_LIMIT
from doiget.zotero.writing import UPDATE_TRIES

__all__ = [
    "LOCAL_LIBRARY",
    "MAX_WRITE_OBJECTS",
    "NOT_CONFIGURED",
    "PAGE_LIMIT",
    "UPDATE_TRIES",
    "WEB_ROOT",
    "ItemQuery",
    "ZoteroApi",
    "open_api",
]

WEB_ROOT: Final = f"https://{API_HOST}"
# The desktop app's own library in its local API.
LOCAL_LIBRARY: Final = LibraryRef("users", "0", local=True)
NOT_CONFIGURED: Final = f"Zotero is not configured: it {ZOTERO_SETUP}, then restart doiget."


class ZoteroApi(ZoteroFiles, ZoteroConnector):
    """Reads and writes one Zotero library; build it with :func:`open_api`."""


def open_api(settings: Any, network: Any) -> ZoteroApi:
    """The configured library's API; INVALID_CONFIG, saying how to configure one, when
    Zotero is not configured."""
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
    raise DoigetError(ErrorCode.INVALID_CONFIG, NOT_CONFIGURED)
