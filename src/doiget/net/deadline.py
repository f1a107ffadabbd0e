"""A call's overall deadline and each request's own time limit, charged only for the
time doiget is not waiting on its own gates.

A tool call may make several requests: retries, fallback sources, PDF candidates.
Each request has its own time limit; the call as a whole has one too, set where
the call starts, and every request made inside it stops when that runs out.

Time spent queued behind doiget's own limits (the rate gate, a host's in-flight
places) is not the upstream being slow, so neither clock runs then:

- a request's clock is paused while it waits at a gate (see :func:`at_gate`);
- a call's clock starts when its first request leaves the gates, and is paused while
  every request it has open waits at one. Between requests it runs: a retry's
  backoff and the call's own work count.

A request runs inside :class:`RequestClock`, a cancel scope whose deadline is the
sooner of the two clocks' ends while the request is moving and "never" while it
waits at a gate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType

import anyio


class CallClock:
    """One call's deadline: ``seconds`` of time not spent waiting at doiget's gates.

    Requests of the call (and bare gate waits) register as open; the clock runs
    once one of them has left the gates, except while every open one waits at a gate.
    """

    def __init__(self, seconds: float, outer: CallClock | None) -> None:
        self.outer = outer
        self._left = seconds
        self._since: float | None = None  # when the clock last started running
        self._open = 0
        self._waiting = 0
        self._started = False

    def left(self, now: float) -> float:
        """Seconds left at monotonic time ``now``."""
        return self._left - (now - self._since if self._since is not None else 0.0)

    def change(self, now: float, *, opened: int = 0, waiting: int = 0) -> None:
        """Count requests opened/closed and gate waits begun/ended at ``now``."""
        self._left = self.left(now)
        self._open += opened
        self._waiting += waiting
        self._started = self._started or self._waiting < self._open
        paused = self._open > 0 and self._waiting == self._open
        self._since = now if self._started and not paused else None

    def chain(self) -> Iterator[CallClock]:
        """This deadline and the ones of the calls it runs inside."""
        clock: CallClock | None = self
        while clock is not None:
            yield clock
            clock = clock.outer


_CALL: ContextVar[CallClock | None] = ContextVar("doiget_call_deadline", default=None)
_REQUEST: ContextVar[RequestClock | None] = ContextVar("doiget_request_clock", default=None)


def _calls() -> list[CallClock]:
    current = _CALL.get()
    return [] if current is None else list(current.chain())


@contextmanager
def call_deadline(seconds: float) -> Iterator[None]:
    """Give the requests made inside at most ``seconds`` in all (a sooner outer
    deadline stays in force)."""
    token = _CALL.set(CallClock(seconds, _CALL.get()))
    try:
        yield
    finally:
        _CALL.reset(token)


def time_left() -> float | None:
    """Seconds left before the current call's deadline (None when it has none)."""
    now = time.monotonic()
    return min((clock.left(now) for clock in _calls()), default=None)


class RequestClock:
    """One request's limit of ``seconds`` and its calls' deadlines, as a cancel scope.

    Use as a context manager around the whole request, gates included; the request's
    clock runs from entry except inside :func:`at_gate`. After the block,
    :attr:`expired` says whether a clock ran out, :attr:`call_ran_out` which one.
    """

    def __init__(self, seconds: float) -> None:
        self._left = seconds
        self._since = 0.0
        self._depth = 0
        self._calls = _calls()
        self._scope = anyio.CancelScope()
        self.call_ran_out = False

    @property
    def expired(self) -> bool:
        """Whether the request was stopped because a clock ran out."""
        return self._scope.cancelled_caught

    def __enter__(self) -> RequestClock:
        self._scope.__enter__()
        self._token = _REQUEST.set(self)
        now = time.monotonic()
        for clock in self._calls:
            clock.change(now, opened=1)
        self._run(now)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        now = time.monotonic()
        for clock in self._calls:
            clock.change(now, opened=-1, waiting=-1 if self._depth else 0)
        _REQUEST.reset(self._token)
        return bool(self._scope.__exit__(kind, error, traceback))

    def _run(self, now: float) -> None:
        self._since = now
        call_end = min((now + clock.left(now) for clock in self._calls), default=math.inf)
        own_end = now + self._left
        self.call_ran_out = call_end < own_end
        self._scope.deadline = min(call_end, own_end)

    def wait(self) -> None:
        """The request starts waiting at a gate: its clocks stop."""
        self._depth += 1
        if self._depth == 1:
            now = time.monotonic()
            self._left -= now - self._since
            self._scope.deadline = math.inf
            for clock in self._calls:
                clock.change(now, waiting=1)

    def go(self) -> None:
        """The request leaves the gate: its clocks run again."""
        self._depth -= 1
        if self._depth == 0:
            now = time.monotonic()
            for clock in self._calls:
                clock.change(now, waiting=-1)
            self._run(now)


@contextmanager
def at_gate() -> Iterator[None]:
    """Time spent inside is doiget waiting on its own limits: it is charged neither to
    the current request's limit nor to its call's deadline."""
    request = _REQUEST.get()
    if request is not None:
        request.wait()
        try:
            yield
        finally:
            request.go()
        return
    # A wait outside any request: it holds its calls' clocks like a waiting request.
    calls = _calls()
    now = time.monotonic()
    for clock in calls:
        clock.change(now, opened=1, waiting=1)
    try:
        yield
    finally:
        now = time.monotonic()
        for clock in calls:
            clock.change(now, opened=-1, waiting=-1)
