"""The bounded pools that expensive tool work runs in, so the event loop stays free.

Embedding a query, ranking passages, searching the stored papers, listing them: each
runs as one job in a worker thread of a pool, never on the event loop, so a cheap
call (doiget_health, list_projects, doiget_info) is answered between them. Work of
very different cost waits in different pools (the lanes of :mod:`doiget.runtime`):
a local search of milliseconds never waits behind a line of embeddings.

At most ``workers`` jobs run at once (one per core by default: NumPy, torch and
SQLite release the GIL while they work, the ranking done in Python does not, so
more threads than cores would only take turns with each other and with the event
loop), and at most ``queue`` more wait. A job beyond that, or one whose caller's
time limit the jobs ahead would likely use up, is refused at once with RATE_LIMITED
and how many seconds to wait, instead of waiting past its deadline.

A job whose caller gave up (a time limit, a cancelled call) still holds its worker
until it returns: the bound counts threads at work, not callers still waiting. Such a
job is marked abandoned, and work that can stop early asks :func:`abandoned` (the
passage index's SQLite connections do, between steps of a query): only the job whose
caller gave up stops, never another job running beside it.
"""

from __future__ import annotations

import contextvars
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Final, TypeVar

from doiget.errors import DenialContext, DenialReason, DoigetError, ErrorCode

T = TypeVar("T")

QUEUE_DEFAULT: Final = 32
WORKERS_MAX: Final = 64
QUEUE_MAX: Final = 10_000
# The mean job time assumed before any job has finished, and how fast the measured
# mean follows new jobs (an exponential moving average).
FIRST_GUESS_SECONDS: Final = 0.05
SMOOTHING: Final = 0.2


class _Job:
    """What a running job can learn of its caller: whether it gave up."""

    __slots__ = ("abandoned",)

    def __init__(self) -> None:
        self.abandoned = False


_job: contextvars.ContextVar[_Job | None] = contextvars.ContextVar("doiget_job", default=None)


def abandoned() -> bool:
    """Whether the caller of the job running in this thread has given up on it (its
    time limit passed, or the call was cancelled): its result will not be read."""
    job = _job.get()
    return job is not None and job.abandoned


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_workers() -> int:
    """One worker per core this process may use."""
    return min(usable_cores(), WORKERS_MAX)


class WorkPool:
    """``workers`` threads and a waiting line of ``queue`` jobs; more are refused."""

    def __init__(self, workers: int, queue: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.workers = workers
        self.queue = queue
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="doiget-work")
        self._lock = threading.Lock()
        self._pending = 0  # jobs running or waiting, abandoned ones included
        self._mean = FIRST_GUESS_SECONDS

    @property
    def pending(self) -> int:
        """Jobs running or waiting now."""
        return self._pending

    def _likely_done(self, jobs: int) -> float:
        """Seconds until ``jobs`` jobs (running and waiting) have likely run."""
        return math.ceil(jobs / self.workers) * self._mean

    def _wait_ahead(self) -> float:
        """Seconds a new job would likely wait for a worker: none while one is free (a
        call is never refused as busy by an idle pool, however long jobs have taken)."""
        return self._likely_done(self._pending) if self._pending >= self.workers else 0.0

    def retry_after(self) -> int:
        """Whole seconds until the jobs ahead have likely run (at least 1)."""
        return max(1, math.ceil(self._likely_done(self._pending)))

    async def run(
        self, work: Callable[[], T], *, admitted: bool = False, within: float | None = None
    ) -> T:
        """The result of ``work()`` run in a worker; RATE_LIMITED at once when full.

        ``within``: the caller's time limit; the job is refused at once too when the
        jobs ahead of it would likely use that time up (the mean job time so far
        says how long they take), rather than time out in the line.
        ``admitted``: a later job of a call the pool already took (indexing, one job
        per document) joins the line whatever its length, so a long run is never
        refused half-way; it still waits for a worker like any other.
        """
        import asyncio

        with self._lock:
            if not admitted and (
                self._pending >= self.workers + self.queue
                or (within is not None and self._wait_ahead() > within)
            ):
                raise self._refusal()
            self._pending += 1
        job = _Job()
        context = contextvars.copy_context()
        context.run(_job.set, job)
        try:
            future = self._executor.submit(context.run, self._timed, work)
        except BaseException:
            self._done()
            raise
        future.add_done_callback(lambda _: self._done())
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            job.abandoned = True
            raise

    def _timed(self, work: Callable[[], T]) -> T:
        began = time.perf_counter()
        try:
            return work()
        finally:
            took = time.perf_counter() - began
            self._mean += SMOOTHING * (took - self._mean)

    def _done(self) -> None:
        # Runs in the worker as the job ends, or at once for a job cancelled unrun.
        with self._lock:
            self._pending -= 1

    def _refusal(self) -> DoigetError:
        wait = self.retry_after()
        return DoigetError(
            ErrorCode.RATE_LIMITED,
            f"doiget is busy: {self.workers} expensive calls are running and {self.queue} "
            f"are waiting, the most it takes; retry this call in {wait} s.",
            DenialContext(DenialReason.RATE_LIMIT_WINDOW, source="doiget", actual=wait),
            retry_after=float(wait),
            details={
                "retry_after_seconds": wait,
                "suggestedAction": f"Wait {wait} s, then retry this call.",
            },
        )

    def close(self) -> None:
        """Stop taking jobs; those running finish in their threads."""
        self._executor.shutdown(wait=False, cancel_futures=True)
