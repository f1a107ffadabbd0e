"""Whose call this is: research sessions and resource-link artifacts belong to it.

Over HTTP the owner is the caller's token id, set by the MCP server around every tool
call and resource read; over stdio and on the command line there is one owner,
:data:`LOCAL`. Stores key what they keep by the owner, so another owner asking for an
id finds nothing, exactly as for an id that never existed, and each owner has its own
caps.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

LOCAL: Final = ""
_owner: ContextVar[str] = ContextVar("doiget_owner", default=LOCAL)


def current_owner() -> str:
    """The owner of the call being served (:data:`LOCAL` outside HTTP)."""
    return _owner.get()


@contextmanager
def owned_by(owner: str) -> Iterator[None]:
    """Serve what runs inside for ``owner``."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)
