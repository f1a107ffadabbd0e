"""Failures that mean no connection can be made at all, told apart from a busy
upstream: a name that does not resolve, a refused connection, no route."""

from __future__ import annotations

import errno
import socket
from enum import StrEnum

_UNREACHABLE = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN})


class Offline(StrEnum):
    """Why no connection could be made."""

    DNS = "dns"
    REFUSED = "refused"
    UNREACHABLE = "unreachable"

    def describe(self, host: str) -> str:
        """One plain sentence naming the cause for ``host``."""
        if self is Offline.DNS:
            return f"no network: could not resolve {host}"
        if self is Offline.REFUSED:
            return f"could not connect to {host}: the connection was refused"
        return f"no network: no route to {host}"


def offline_cause(exc: BaseException) -> Offline | None:
    """The cause behind a transport error when it is one of the final ones."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return Offline.DNS
        if isinstance(seen, ConnectionRefusedError):
            return Offline.REFUSED
        if isinstance(seen, OSError) and seen.errno in _UNREACHABLE:
            return Offline.UNREACHABLE
        seen = seen.__cause__ or seen.__context__
    return None
