"""The bounded pools that expensive tool work runs in, so the event loop stays free.

Embedding a query, ranking passages, searching the stored papers, listing them: each
runs as one job in a worker thread of a pool, never on the event loop, so a cheap
call (doiget_health, list_projects, doiget_info) is answered between them. Work of
very different cost waits in different pools (the lanes of :mod:`doiget.runtime`):
a local search of milliseconds never waits behind a line of embeddings.

At most ``workers`` jobs run at once (one per core by default: NumPy, torch and
SQLite release the GIL while they work, the ranking done in Python does not, so
more threads than cores would only take turns with each other and with the event
loop), and at most ``queue`` more wait. A job beyond that, or one that would likely
not end within its caller's time limit (waiting for the jobs ahead, then running), is
refused at once with RATE_LIMITED and how many seconds to wait, instead of waiting
past its deadline. How long a job takes is learned per kind of job (the function it
runs): a line of sub-millisecond lookups says nothing of how long a search takes, and
a first search that loads a model says little of the next. A job admitted into the
line on an estimate that proves wrong is refused the same way, with what it would
wait, as soon as it can no longer start in time to end within its limit: a call is
served within its limit or told to come back, it never waits out its clock.

A job whose caller gave up (a time limit, a cancelled call) still holds its worker
until it returns: the bound counts threads at work, not callers still waiting. Such a
job is marked abandoned, and work that can stop early asks :func:`abandoned` (the
passage index's SQLite connections do, between steps of a query): only the job whose
caller gave up stops, never another job running beside it.

A pool may also run the jobs that rank and search in worker processes (``apart``),
as many as it has threads (:meth:`WorkPool.run_apart`): ranking done in Python holds
the GIL, and while threads of the server's own process hold it, the event loop waits
for its turn at every step of every call, cheap ones included. A job run apart is a
module-level function whose arguments and result are pickled; it opens what it reads
(an index file) once per process. It cannot be told that its caller gave up, so it carries its
caller's deadline and :func:`abandoned` compares the clock with it (the monotonic
clock is the machine's, the same in every process).
"""

from __future__ import annotations

import contextvars
import functools
import gc
import math
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import BrokenExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar, cast

import anyio

from doiget.errors import DenialContext, DenialReason, DoigetError, ErrorCode

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

QUEUE_DEFAULT: Final = 32
WORKERS_MAX: Final = 64
QUEUE_MAX: Final = 10_000
# The mean job time assumed before any job of a kind has finished, and how fast the
# measured mean and deviation follow new jobs (exponential moving averages).
FIRST_GUESS_SECONDS: Final = 0.05
SMOOTHING: Final = 0.2
# A job is planned to take its kind's mean plus this many mean deviations (as TCP
# times a round trip): job times spread widely on a loaded machine, and a plan on the
# mean alone lets in the calls that then end past their limit.
SPREAD: Final = 4.0
# How often a job waiting for a worker looks again at whether it can still start in
# time; it is refused this much before its latest start, so its refusal comes before
# its caller's limit, however late the event loop wakes it.
RECHECK_SECONDS: Final = 0.1
# How much lower the worker processes' CPU priority is than the server's: when the
# cores are busy, the event loop answering every call comes first.
APART_NICENESS: Final = 10
# How often a worker process checks that the process that started it still runs.
PARENT_CHECK_SECONDS: Final = 0.5
# How long a worker that prepared waits for the others to have prepared too.
MEETING_SECONDS: Final = 120.0


class _Job:
    """What a running job can learn of its caller: whether it gave up, or by when it
    will have (a job run apart, which no flag set in the caller's process reaches)."""

    __slots__ = ("abandoned", "deadline")

    def __init__(self, deadline: float | None = None) -> None:
        self.abandoned = False
        self.deadline = deadline

    def given_up(self) -> bool:
        return self.abandoned or (self.deadline is not None and time.monotonic() > self.deadline)


_job: contextvars.ContextVar[_Job | None] = contextvars.ContextVar("doiget_job", default=None)


def abandoned() -> bool:
    """Whether the caller of the job running in this thread has given up on it (its
    time limit passed, or the call was cancelled): its result will not be read."""
    job = _job.get()
    return job is not None and job.given_up()


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_workers() -> int:
    """One worker per core this process may use."""
    return min(usable_cores(), WORKERS_MAX)


def _start_apart() -> None:
    """How a worker process starts: its stdout is its stderr (a stdio server's stdout
    carries JSON-RPC frames only), Ctrl-C is the parent's to handle (it stops the
    workers), and it ends when the parent is gone, however the parent ended (killed,
    it never says so: the worker holds both ends of its job pipe, so no end of file
    would ever come)."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "nice"):  # not on Windows
        os.nice(APART_NICENESS)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="doiget-parent-watch", daemon=True).start()


_own: dict[tuple[object, Hashable], object] = {}
_own_lock = threading.Lock()


def own(make: Callable[[K], T], key: K) -> T:
    """This process's one ``make(key)`` (an index opened by its path), made on first
    use: a job run apart reuses what an earlier job of its process opened."""
    with _own_lock:
        found = _own.get((make, key))
        if found is None:
            found = _own[make, key] = make(key)
            # Kept for the process's life, with all it imported: the garbage collector
            # need not scan it again and again (see doiget.server.toolset.LazyCore).
            gc.freeze()
        return cast(T, found)


def _run_apart(
    job: Callable[..., T],
    deadline: float | None,
    start_by: float | None,
    args: tuple[object, ...],
) -> tuple[float, T] | None:
    """``job(*args)`` in a worker process, :func:`abandoned` once ``deadline`` has
    passed; the seconds it took, and its result. None, unrun, once ``start_by`` has
    passed: it would likely not end by its deadline."""
    if start_by is not None and time.monotonic() > start_by:
        return None
    token = _job.set(_Job(deadline))
    began = time.perf_counter()
    try:
        result = job(*args)
        return time.perf_counter() - began, result
    finally:
        _job.reset(token)


def _prepare_in(
    meeting: str, workers: int, job: Callable[..., object], args: tuple[object, ...]
) -> None:
    """``job(*args)`` in a worker process, then a wait (bounded) until ``workers``
    processes have run theirs, each marking ``meeting`` with its pid: a worker that
    waits takes no second run, so each of them runs it once."""
    met = Path(meeting)
    try:
        job(*args)
    finally:
        (met / str(os.getpid())).touch()
    give_up = time.monotonic() + MEETING_SECONDS
    while sum(1 for _ in met.iterdir()) < workers and time.monotonic() < give_up:
        time.sleep(0.02)


def _worker_lost() -> DoigetError:
    return DoigetError(
        ErrorCode.INTERNAL_ERROR,
        "a worker process of doiget stopped while running this call (the system may "
        "be short of memory); it has been replaced: retry the call.",
    )


class _Times:
    """How long jobs of one kind take: a smoothed mean and mean deviation."""

    __slots__ = ("deviation", "mean", "seen")

    def __init__(self) -> None:
        self.mean = FIRST_GUESS_SECONDS
        self.deviation = FIRST_GUESS_SECONDS / 2
        self.seen = False

    def learn(self, took: float) -> None:
        if not self.seen:  # the first job replaces the guess
            self.seen = True
            self.mean, self.deviation = took, took / 2
            return
        self.deviation += SMOOTHING * (abs(took - self.mean) - self.deviation)
        self.mean += SMOOTHING * (took - self.mean)

    def planned(self) -> float:
        """Seconds a job of this kind is planned to take."""
        return self.mean + SPREAD * self.deviation


def _kind(work: Callable[..., object]) -> Hashable:
    """What makes jobs alike: the code they run (a partial's function, a lambda's
    definition), whatever its arguments."""
    while isinstance(work, functools.partial):
        work = work.func
    return getattr(work, "__code__", work)


class _Place:
    """A job's place in the pool: its kind, the seconds it was planned to take when
    admitted, and the end of its caller's limit when it had to wait for a worker."""

    __slots__ = ("deadline", "kind", "planned")

    def __init__(self, kind: Hashable, planned: float, deadline: float | None) -> None:
        self.kind = kind
        self.planned = planned
        self.deadline = deadline


class WorkPool:
    """``workers`` threads and a waiting line of ``queue`` jobs; more are refused.
    With ``apart``, searches run in as many worker processes (spawned on first use),
    under the same bound and line."""

    def __init__(self, workers: int, queue: int, *, apart: bool = False) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.workers = workers
        self.queue = queue
        self.apart = apart
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="doiget-work")
        self._apart: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._pending = 0  # jobs running or waiting, abandoned ones included
        self._ahead = 0.0  # the seconds those jobs were planned to take, summed
        self._times: dict[Hashable, _Times] = {}
        # What each worker process ran first (prepare_apart), for this set of processes.
        self._prepared: dict[Hashable, list[Future[object]]] = {}
        # Worker processes free for a job: one waits for them here, where it can still
        # be refused, not in the process pool's own line, which runs it however late.
        self._free_processes = anyio.Semaphore(workers)

    @property
    def pending(self) -> int:
        """Jobs running or waiting now."""
        return self._pending

    def _planned(self, kind: Hashable) -> float:
        return (self._times.get(kind) or _Times()).planned()

    def retry_after(self) -> int:
        """Whole seconds until the jobs ahead have likely run (at least 1)."""
        return max(1, math.ceil(self._ahead / self.workers))

    async def run(
        self, work: Callable[[], T], *, admitted: bool = False, within: float | None = None
    ) -> T:
        """The result of ``work()`` run in a worker; RATE_LIMITED at once when full.

        ``within``: the caller's time limit; the job is refused at once too when it
        would likely not end within it, waiting for the jobs ahead and then running
        (what jobs of its kind took so far says how long each takes), rather than time
        out; and refused as it waits, once it could no longer start in time.
        ``admitted``: a later job of a call the pool already took (indexing, one job
        per document) joins the line whatever its length, so a long run is never
        refused half-way; it still waits for a worker like any other.
        """
        place = self._admit(_kind(work), admitted, within)
        job = _Job()
        context = contextvars.copy_context()
        context.run(_job.set, job)
        return await self._outcome(
            lambda: self._executor.submit(context.run, self._timed, work, place.kind),
            job,
            place,
        )

    async def run_apart(
        self,
        job: Callable[..., T],
        *args: object,
        within: float | None = None,
    ) -> T:
        """``job(*args)`` in a worker process (the pool was made ``apart``); admitted,
        refused and timed like :meth:`run`. ``job`` is a module-level function; it,
        its arguments and its result must pickle."""
        if not self.apart:
            raise RuntimeError("run_apart needs a pool made with apart=True")
        place = self._admit(_kind(job), False, within)
        deadline = None if within is None else time.monotonic() + within
        try:
            await self._process_freed(place)
        except BaseException:
            self._done(place)
            raise
        processes = self._processes()
        try:
            ran = await self._outcome(
                lambda: processes.submit(_run_apart, job, deadline, self._start_by(place), args),
                _Job(),
                place,
            )
        except BrokenExecutor as exc:
            self._retire(processes)
            raise _worker_lost() from exc
        finally:
            self._free_processes.release()
        if ran is None:  # its worker came free too late for it to end in time
            raise self._refusal()
        took, result = ran
        self._learn(place.kind, took)
        return result

    async def _process_freed(self, place: _Place) -> None:
        """Wait, first come first served, until a worker process is free for the job
        at ``place``: a job handed to the process pool cannot be taken back, so it would
        run however late its worker came free. Refused once it could no longer start in
        time to end within its caller's limit."""
        start_by = self._start_by(place)
        if start_by is None:
            await self._free_processes.acquire()
            return
        with anyio.move_on_after(max(0.0, start_by - time.monotonic())):
            await self._free_processes.acquire()
            start_by = self._start_by(place)  # what jobs take may have been learned since
            if start_by is not None and time.monotonic() > start_by:
                self._free_processes.release()
                raise self._refusal()
            return
        raise self._refusal()

    async def prepare_apart(self, job: Callable[..., object], *args: object) -> None:
        """``job(*args)`` run once in each worker process, outside any line and time
        limit: what every search apart needs first (an index opened, a model loaded),
        so that no call's own limit pays for a worker's start. Once per set of
        processes and arguments; calls that come meanwhile wait for the same runs."""
        import asyncio

        processes = self._processes()
        key = (job, args)
        with self._lock:
            runs = self._prepared.get(key)
            if runs is None:
                meeting = tempfile.mkdtemp(prefix="doiget-prepare-")
                runs = self._prepared[key] = [
                    processes.submit(_prepare_in, meeting, self.workers, job, args)
                    for _ in range(self.workers)
                ]

                def cleared(_: Future[object], runs: list[Future[object]] = runs) -> None:
                    if all(run.done() for run in runs):
                        shutil.rmtree(meeting, ignore_errors=True)

                for run in runs:
                    run.add_done_callback(cleared)
        try:
            # Shielded: the runs are shared, one caller giving up stops none of them.
            await asyncio.shield(asyncio.gather(*map(asyncio.wrap_future, runs)))
        except BrokenExecutor as exc:
            self._retire(processes)
            raise _worker_lost() from exc
        except Exception:
            with self._lock:
                if self._prepared.get(key) is runs:
                    del self._prepared[key]  # the next call tries again
            raise

    def _admit(self, kind: Hashable, admitted: bool, within: float | None) -> _Place:
        """Count a new job in, or refuse it at once (see :meth:`run`). Never while a
        worker is free: a call is not refused as busy by an idle pool, however long
        jobs have taken."""
        with self._lock:
            planned = self._planned(kind)
            deadline = None
            if not admitted and self._pending >= self.workers:
                if self._pending >= self.workers + self.queue:
                    raise self._refusal(full=True)
                if within is not None:
                    # It waits while the jobs ahead run, shared out over the workers.
                    if self._ahead / self.workers + planned > within:
                        raise self._refusal()
                    deadline = time.monotonic() + within
            self._pending += 1
            self._ahead += planned
            return _Place(kind, planned, deadline)

    def _start_by(self, place: _Place) -> float | None:
        """When a waiting job must start at the latest to likely end within its
        caller's limit, on what jobs of its kind take now."""
        if place.deadline is None:
            return None
        with self._lock:
            return place.deadline - self._planned(place.kind) - 2 * RECHECK_SECONDS

    async def _outcome(self, submit: Callable[[], Future[T]], job: _Job, place: _Place) -> T:
        """Await the job ``submit`` starts; the count of jobs drops as it ends. A job
        still waiting for a worker once it could no longer end in time is taken out of
        the line and refused."""
        import asyncio

        try:
            future = submit()
        except BaseException:
            self._done(place)
            raise
        future.add_done_callback(lambda _: self._done(place))
        waiting = asyncio.wrap_future(future)
        try:
            while (start_by := self._start_by(place)) is not None and not waiting.done():
                left = start_by - time.monotonic()
                if left <= 0:
                    if future.cancel():  # not yet started
                        raise self._refusal()
                    break
                # Looked at again now and then: a job that ends meanwhile may show
                # that jobs of this kind take longer than thought.
                await asyncio.wait((waiting,), timeout=min(left, RECHECK_SECONDS))
            return await waiting
        except asyncio.CancelledError:
            job.abandoned = True
            waiting.cancel()
            raise

    def _processes(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._apart is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # spawn: a forked copy of a process with threads (the event loop's
                # helpers, SQLite connections) can inherit a lock held mid-way.
                self._apart = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_apart,
                )
                # Start every worker now, each with a no-op job. Besides sparing later
                # calls the start, their answers make the pool's watcher look again at
                # which processes it has: it only notices the death of a worker it
                # knew of when it last began waiting, and with spawn workers are added
                # after it began.
                for _ in range(self.workers):
                    self._apart.submit(os.getpid)
            return self._apart

    def _retire(self, processes: ProcessPoolExecutor | None) -> None:
        """Let ``processes`` go (a worker of it died, or the pool closes); the next job
        starts fresh ones. Jobs of a newer set of processes are left alone."""
        with self._lock:
            if processes is None or processes is not self._apart:
                return
            self._apart = None
            self._prepared.clear()
        processes.shutdown(wait=False, cancel_futures=True)

    def _timed(self, work: Callable[[], T], kind: Hashable) -> T:
        began = time.perf_counter()
        try:
            return work()
        finally:
            self._learn(kind, time.perf_counter() - began)

    def _learn(self, kind: Hashable, took: float) -> None:
        """Fold one job's seconds into what jobs of its kind take."""
        with self._lock:
            self._times.setdefault(kind, _Times()).learn(took)

    def _done(self, place: _Place) -> None:
        # Runs in the worker as the job ends, or at once for a job cancelled unrun.
        with self._lock:
            self._pending -= 1
            self._ahead = max(0.0, self._ahead - place.planned)

    def _refusal(self, full: bool = False) -> DoigetError:
        wait = self.retry_after()
        why = (
            f"{self.workers} expensive calls are running and {self.queue} are waiting, "
            "the most it takes"
            if full
            else "the calls ahead of this one would keep it past its time limit"
        )
        return DoigetError(
            ErrorCode.RATE_LIMITED,
            f"doiget is busy: {why}; retry this call in {wait} s.",
            DenialContext(DenialReason.RATE_LIMIT_WINDOW, source="doiget", actual=wait),
            retry_after=float(wait),
            details={
                "retry_after_seconds": wait,
                "suggestedAction": f"Wait {wait} s, then retry this call.",
            },
        )

    def close(self) -> None:
        """Stop taking jobs; those running finish in their threads, and the worker
        processes end once theirs are done."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._retire(self._apart)
