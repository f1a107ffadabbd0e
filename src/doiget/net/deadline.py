"""A call's overall deadline, shared by every request it makes.

A tool call may make several requests: retries, fallback sources, PDF candidates.
Each request has its own time limit; the call as a whole has one too, set where
the call starts, and every request made inside it stops when that runs out.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("doiget_call_deadline", default=None)


@contextmanager
def call_deadline(seconds: float) -> Iterator[None]:
    """Give the requests made inside at most ``seconds`` in all (a sooner outer
    deadline stays in force)."""
    end = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds left before the current call's deadline (None when it has none)."""
    end = _DEADLINE.get()
    return None if end is None else end - time.monotonic()
