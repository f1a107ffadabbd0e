"""The Zotero settings, checked at start: which library, reached which way, and whether
doiget may write to it.

Two ways in, never both: the desktop app's local API on a loopback port
(``DOIGET_ZOTERO_LOCAL``) or the Web API for one library with a key
(``DOIGET_ZOTERO_LIBRARY`` + ``DOIGET_ZOTERO_API_KEY``). Writes are off unless
``DOIGET_ZOTERO_WRITE`` says ``ask`` (each write approved by the user) or ``on``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urlsplit

from doiget.errors import quoted
from doiget.secret import Secret
from doiget.settingvalues import refuse

LOCAL_VAR: Final = "DOIGET_ZOTERO_LOCAL"
LIBRARY_VAR: Final = "DOIGET_ZOTERO_LIBRARY"
KEY_VAR: Final = "DOIGET_ZOTERO_API_KEY"
WRITE_VAR: Final = "DOIGET_ZOTERO_WRITE"
# The port the desktop app's HTTP server listens on unless its user changed it.
LOCAL_DEFAULT_URL: Final = "http://127.0.0.1:23119"
WRITE_MODES: Final = ("off", "ask", "on")
_LIBRARY: Final = re.compile(r"(users|groups)/([0-9]+)")
_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost")

WriteMode = Literal["off", "ask", "on"]


@dataclass(frozen=True, slots=True)
class ZoteroSettings:
    """Which Zotero library doiget reads (and may write), resolved at start."""

    # The desktop app's base URL (always http://127.0.0.1:<port>), when it is the way in.
    local_url: str | None = None
    # ``users/<id>`` or ``groups/<id>`` for the Web API.
    library: str | None = None
    write: WriteMode = "off"

    @property
    def configured(self) -> bool:
        return self.local_url is not None or self.library is not None


def zotero_settings(values: Mapping[str, str | Secret]) -> ZoteroSettings:
    """The Zotero settings among the declared upstream ``values``; a value doiget
    cannot honour, or both ways in at once, refuses the start."""
    local = _text(values, LOCAL_VAR)
    library = _text(values, LIBRARY_VAR)
    key = values.get(KEY_VAR)
    if local is not None and (library is not None or key is not None):
        raise refuse(
            f"{LOCAL_VAR} and {LIBRARY_VAR}/{KEY_VAR} are both set: doiget reads one Zotero "
            f"library, either through the desktop app ({LOCAL_VAR}) or through the Web API "
            f"({LIBRARY_VAR} with {KEY_VAR}); unset one of them."
        )
    if library is not None and key is None:
        raise refuse(
            f"{LIBRARY_VAR}={quoted(library)} needs {KEY_VAR}: create a key at "
            "https://www.zotero.org/settings/keys (allow write access for doiget to add works)."
        )
    return ZoteroSettings(
        local_url=_local_url(local) if local is not None else None,
        library=_library(library) if library is not None else None,
        write=_write_mode(_text(values, WRITE_VAR)),
    )


def _text(values: Mapping[str, str | Secret], var: str) -> str | None:
    value = values.get(var)
    if value is None or isinstance(value, Secret):
        return None
    return value.strip() or None


def _local_url(raw: str) -> str:
    """``1`` for the desktop app's own port, or ``http://127.0.0.1:<port>`` /
    ``http://localhost:<port>``; the app listens on IPv4 loopback, so localhost is
    spelled 127.0.0.1 (it may resolve to ::1 first)."""
    if raw == "1":
        return LOCAL_DEFAULT_URL
    try:
        parts = urlsplit(raw.rstrip("/"))
        port = parts.port
    except ValueError:
        port = None
        parts = urlsplit("")
    plain = not (parts.path or parts.query or parts.fragment or parts.username or parts.password)
    if parts.scheme != "http" or parts.hostname not in _LOOPBACK_NAMES or port is None or not plain:
        raise refuse(
            f"{LOCAL_VAR}={quoted(raw)}; use 1 for the Zotero desktop app on this computer "
            "(port 23119), or http://127.0.0.1:<port> when its port was changed. Only the "
            "loopback address is accepted: the app's local API answers nothing else."
        )
    return f"http://127.0.0.1:{port}"


def _library(raw: str) -> str:
    if _LIBRARY.fullmatch(raw) is None:
        raise refuse(
            f"{LIBRARY_VAR}={quoted(raw)}; use users/<user ID> for your own library (the "
            "number shown at https://www.zotero.org/settings/keys) or groups/<group ID>."
        )
    return raw


def _write_mode(raw: str | None) -> WriteMode:
    word = (raw or "off").lower()
    if word == "off":
        return "off"
    if word == "ask":
        return "ask"
    if word == "on":
        return "on"
    raise refuse(
        f"{WRITE_VAR}={quoted(raw)}; use off (doiget never writes to Zotero), ask (each "
        "write approved by you) or on (writes without asking)."
    )
