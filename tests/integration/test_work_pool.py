"""Expensive tool work runs in the bounded work pool, off the event loop.

The pool is made busy with a job of the test's own that waits on an event (the pool
takes any callable), so every claim below holds whatever the machine's speed: calls
queue behind it while cheap calls are answered, one more than the queue holds is
refused at once in its toolset's error shape, and no more than ``workers`` jobs
ever run together. The server, store, index and envelopes are the real ones.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest

from doiget.envelopes import LIBRARY_ENVELOPE, PAPERS_ENVELOPE, WEB_ENVELOPE
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.papers import service as papers_service
from doiget.papers.store import Store
from doiget.refs import parse_ref
from doiget.runtime import Lane, load_runtime
from doiget.server.app import DoigetServer
from doiget.workpool import WorkPool

PROJECT = "lab/notes"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
# Upper bound on any wait in these tests, never a measurement.
PATIENCE = 30.0


def _server(tmp: Path, workers: int, queue: int) -> DoigetServer:
    (tmp / "config.toml").write_text(f'[projects."{PROJECT}"]\nhybrid_enabled = true\n')
    env = {
        "DOIGET_CONFIG": str(tmp / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp / "data"),
        "DOIGET_STORE_ROOT": str(tmp / "papers"),
        "DOIGET_LOG_PATH": str(tmp / "log.jsonl"),
        "DOIGET_TOOLSETS": "papers,library",
        "DOIGET_WORKERS": str(workers),
        "DOIGET_WORK_QUEUE": str(queue),
    }
    return DoigetServer(load_runtime(env))


async def _call(server: DoigetServer, tool: str, **arguments: Any) -> types.CallToolResult:
    context: Any = SimpleNamespace(meta=None, request=None, request_id=1, session=None)
    params = types.CallToolRequestParams(name=tool, arguments=arguments)
    return await server.call_tool(context, params)


EXPENSIVE = (
    ("doiget_search_local", {"query": "graph"}),
    ("find_chunks", {"project": PROJECT, "query": "graph"}),
    ("query_hybrid", {"project": PROJECT, "query": "graph"}),
    ("doiget_list_recent", {}),
)
LANES: tuple[Lane, ...] = ("papers", "library")
CHEAP = (("doiget_health", {}), ("list_projects", {}), ("doiget_info", {"ref": "10.1234/x"}))


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # never leave a worker waiting


async def _occupy(pool: WorkPool, gate: threading.Event, started: threading.Event) -> None:
    def hold() -> None:
        started.set()
        gate.wait(PATIENCE)

    await pool.run(hold)


async def _fill(tasks: anyio.abc.TaskGroup, pool: WorkPool, gate: threading.Event) -> None:
    """Make ``pool`` busy with jobs waiting on ``gate``: one running, its line full."""
    started = threading.Event()
    tasks.start_soon(_occupy, pool, gate, started)
    await _until(started)
    for _ in range(pool.queue):
        tasks.start_soon(_occupy, pool, gate, threading.Event())
    with anyio.fail_after(PATIENCE):
        while pool.pending < pool.workers + pool.queue:
            await anyio.sleep(0.01)


async def _until(flag: threading.Event) -> None:
    with anyio.fail_after(PATIENCE):
        while not flag.is_set():
            await anyio.sleep(0.01)


async def test_cheap_calls_are_answered_while_expensive_ones_wait(
    tmp_path: Path, gate: threading.Event
) -> None:
    server = _server(tmp_path, workers=1, queue=len(EXPENSIVE))
    pools = [server.runtime.pool(lane) for lane in LANES]
    answers: dict[str, types.CallToolResult] = {}

    async def expensive(tool: str, arguments: dict[str, Any]) -> None:
        answers[tool] = await _call(server, tool, **arguments)

    async with anyio.create_task_group() as tasks:
        for pool in pools:
            started = threading.Event()
            tasks.start_soon(_occupy, pool, gate, started)
            await _until(started)
        for tool, arguments in EXPENSIVE:
            tasks.start_soon(expensive, tool, arguments)
        with anyio.fail_after(PATIENCE):
            while sum(pool.pending for pool in pools) < len(pools) + len(EXPENSIVE):
                await anyio.sleep(0.01)
        for tool, arguments in CHEAP:
            cheap = await _call(server, tool, **arguments)
            assert cheap.content, tool
            assert tool == "doiget_info" or not cheap.is_error, cheap.content
        # Every expensive call is still waiting for its lane's one busy worker.
        assert answers == {}
        gate.set()
    assert sorted(answers) == sorted(tool for tool, _ in EXPENSIVE)
    assert not any(answer.is_error for answer in answers.values())
    await server.close()


async def test_a_full_queue_refuses_at_once_in_each_toolsets_shape(
    tmp_path: Path, gate: threading.Event
) -> None:
    server = _server(tmp_path, workers=1, queue=1)
    pools = [server.runtime.pool(lane) for lane in LANES]
    async with anyio.create_task_group() as tasks:
        for pool in pools:
            await _fill(tasks, pool, gate)
        papers = await _call(server, "doiget_search_local", query="graph")
        library = await _call(server, "find_chunks", project=PROJECT, query="graph")
        hybrid = await _call(server, "query_hybrid", project=PROJECT, query="graph")
        assert [pool.pending for pool in pools] == [2, 2]  # the refused never joined
        gate.set()

    assert papers.is_error
    error = (papers.structured_content or {})["error"]
    assert error["code"] == "RATE_LIMITED"
    assert error["denial_context"]["reason"] == "rate_limit_window"
    assert error["denial_context"]["actual"] >= 1
    assert "retry this call in" in error["message"]
    for refused in (library, hybrid):
        assert refused.is_error
        body = (refused.structured_content or {})["error"]
        assert body["code"] == "RATE_LIMITED"
        assert body["details"]["retry_after_seconds"] >= 1
    # Once the pool has room, the same call is served.
    again = await _call(server, "find_chunks", project=PROJECT, query="graph")
    assert not again.is_error
    await server.close()


async def test_a_local_search_never_waits_behind_the_librarys_line(
    tmp_path: Path, gate: threading.Event
) -> None:
    """With the library's worker busy and its line full, a local search and a listing
    of the stored papers are still served, while a library call is refused."""
    server = _server(tmp_path, workers=1, queue=1)
    async with anyio.create_task_group() as tasks:
        await _fill(tasks, server.runtime.pool("library"), gate)
        local = await _call(server, "doiget_search_local", query="graph")
        recent = await _call(server, "doiget_list_recent")
        library = await _call(server, "find_chunks", project=PROJECT, query="graph")
        gate.set()
    assert not local.is_error, local.content
    assert not recent.is_error, recent.content
    assert (library.structured_content or {})["error"]["code"] == "RATE_LIMITED"
    await server.close()


def test_the_refusal_reads_as_a_retryable_rate_limit_on_the_web() -> None:
    pool = WorkPool(workers=1, queue=0)
    refusal = pool._refusal()
    body = WEB_ENVELOPE.failure(refusal).structured["error"]
    assert body["kind"] == "rate_limit"
    assert body["retryable"] is True
    assert body["suggestedAction"].startswith("Wait ")
    assert "another provider" not in body["suggestedAction"]
    # The other envelopes carry the same wait.
    wait = refusal.retry_after
    assert PAPERS_ENVELOPE.failure(refusal).structured["error"]["denial_context"]["actual"] == wait
    library = LIBRARY_ENVELOPE.failure(refusal).structured["error"]
    assert library["details"]["retry_after_seconds"] == wait
    pool.close()


async def test_no_more_than_workers_jobs_run_at_once(gate: threading.Event) -> None:
    pool = WorkPool(workers=2, queue=4)
    lock = threading.Lock()
    running = peak = 0

    def job() -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(PATIENCE)
        time.sleep(0.01)
        with lock:
            running -= 1

    refused: list[DoigetError] = []

    async def one() -> None:
        try:
            await pool.run(job)
        except DoigetError as error:
            refused.append(error)

    async with anyio.create_task_group() as tasks:
        for _ in range(9):
            tasks.start_soon(one)
        with anyio.fail_after(PATIENCE):
            while pool.pending < 6 or len(refused) < 3:
                await anyio.sleep(0.01)
        gate.set()
    assert peak == 2
    assert len(refused) == 3
    assert {error.code for error in refused} == {ErrorCode.RATE_LIMITED}
    pool.close()


async def test_a_job_its_caller_gave_up_on_still_holds_its_worker(gate: threading.Event) -> None:
    pool = WorkPool(workers=1, queue=0)
    started = threading.Event()
    with anyio.move_on_after(PATIENCE) as scope:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_occupy, pool, gate, started)
            await _until(started)
            tasks.cancel_scope.cancel()  # the caller's deadline
    assert not scope.cancelled_caught
    # The abandoned job is still running: the pool has no room for another.
    with pytest.raises(DoigetError) as refused:
        await pool.run(lambda: None)
    assert refused.value.code is ErrorCode.RATE_LIMITED
    gate.set()
    with anyio.fail_after(PATIENCE):
        while pool.pending:
            await anyio.sleep(0.01)
    assert await pool.run(lambda: 42) == 42
    pool.close()


async def test_a_job_the_line_would_time_out_is_refused_at_once(gate: threading.Event) -> None:
    pool = WorkPool(workers=1, queue=10)
    await pool.run(lambda: time.sleep(0.3))  # the pool learns how long a job takes
    started = threading.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_occupy, pool, gate, started)
        await _until(started)
        # Room in the line, but not within a limit shorter than the job ahead.
        with pytest.raises(DoigetError) as refused:
            await pool.run(lambda: None, within=0.001)
        assert refused.value.code is ErrorCode.RATE_LIMITED
        assert refused.value.retry_after is not None and refused.value.retry_after >= 1
        gate.set()
    assert await pool.run(lambda: 7, within=PATIENCE) == 7
    pool.close()


async def test_an_idle_pool_never_refuses_a_call_as_busy() -> None:
    """Jobs that took long before say nothing of a call that finds a worker free: it
    runs (and may time out on its own), it is not told doiget is busy."""
    pool = WorkPool(workers=1, queue=10)
    await pool.run(lambda: time.sleep(0.3))
    assert await pool.run(lambda: 5, within=0.001) == 5
    pool.close()


async def test_only_the_job_whose_caller_gave_up_is_told_so() -> None:
    """A job whose call is cancelled sees abandoned(); one running beside it does not."""
    from doiget.workpool import abandoned

    pool = WorkPool(2, 0)
    started = [threading.Event(), threading.Event()]
    cancelled = threading.Event()
    seen: dict[int, bool] = {}

    def job(n: int) -> None:
        started[n].set()
        cancelled.wait(PATIENCE)
        deadline = time.monotonic() + PATIENCE
        while n == 0 and not abandoned() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen[n] = abandoned()

    scope = anyio.CancelScope()

    async def given_up() -> None:
        with scope:
            await pool.run(lambda: job(0))

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(pool.run, lambda: job(1))
            tasks.start_soon(given_up)
            for event in started:
                assert await anyio.to_thread.run_sync(event.wait, PATIENCE)
            scope.cancel()
            cancelled.set()
    finally:
        pool.close()
    deadline = time.monotonic() + PATIENCE
    while len(seen) < 2 and time.monotonic() < deadline:
        await anyio.sleep(0.01)
    assert seen == {0: True, 1: False}
    assert not abandoned()  # outside any job


async def test_a_local_search_that_would_wait_past_its_limit_is_refused_not_left_waiting(
    tmp_path: Path, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local search behind a job that holds the papers lane waits at most its limit
    (a second here): refused with RATE_LIMITED and the wait, while the job ahead goes on."""
    monkeypatch.setattr(papers_service, "LOCAL_SEARCH_SECONDS", 1.0)
    server = _server(tmp_path, workers=1, queue=4)
    pool = server.runtime.pool("papers")
    started = threading.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_occupy, pool, gate, started)
        await _until(started)
        began = time.monotonic()
        with anyio.fail_after(PATIENCE):
            answer = await _call(server, "doiget_search_local", query="graph")
        waited = time.monotonic() - began
        gate.set()
    await server.close()
    assert answer.is_error
    error = (answer.structured_content or {})["error"]
    assert error["code"] == "RATE_LIMITED" and error["denial_context"]["actual"] >= 1
    assert waited < 1.0  # told before its limit ran out, not when it did


async def test_reading_and_quote_checks_wait_in_the_papers_lane(
    tmp_path: Path, gate: threading.Event
) -> None:
    """Reading a stored paper and checking a quotation (in a paper or a project) are jobs
    of the papers lane: refused at once while its line is full, served once it is not."""
    server = _server(tmp_path, workers=1, queue=1)
    ref = parse_ref("10.1234/jose")
    store = Store(tmp_path / "papers")
    pdf = store.pdf_path(ref)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / "openquestion-jose-paper.pdf", pdf)
    store.write_metadata(ref, Work(source="crossref", title="A paper"), doiget_fields={}, pdf=pdf)
    quote = "All code blocks are removed and the interactivity of the charts is maintained."
    calls: tuple[tuple[str, dict[str, Any]], ...] = (
        ("doiget_read_paper", {"ref": "10.1234/jose"}),
        ("doiget_read_paper", {"ref": "10.1234/jose", "pages": "3"}),
        ("doiget_check_quote", {"ref": "10.1234/jose", "quote": quote}),
        ("doiget_check_quote", {"quote": quote}),
    )
    pool = server.runtime.pool("papers")
    async with anyio.create_task_group() as tasks:
        await _fill(tasks, pool, gate)
        refused = [await _call(server, tool, **arguments) for tool, arguments in calls]
        assert pool.pending == 2  # the refused never joined
        gate.set()
    for answer in refused:
        assert answer.is_error
        error = (answer.structured_content or {})["error"]
        assert error["code"] == "RATE_LIMITED" and error["denial_context"]["actual"] >= 1
    served = [await _call(server, tool, **arguments) for tool, arguments in calls[:3]]
    assert not any(answer.is_error for answer in served), [a.content for a in served]
    assert (served[2].structured_content or {})["found"] is True
    await server.close()


class _Outcomes:
    """How the calls of an overload ended."""

    def __init__(self) -> None:
        self.served = 0
        self.refused: list[DoigetError] = []
        self.timed_out = 0


async def _overload(
    outcomes: _Outcomes,
    call: Any,
    limit: float,
    clients: int,
    seconds: float,
) -> None:
    """``clients`` callers each calling ``call(limit)`` in turn for ``seconds``, under a
    time limit of ``limit`` as the tools set one; a refused caller comes back after a
    short pause (sooner than told, to keep the pool overloaded)."""
    end = time.monotonic() + seconds

    async def client() -> None:
        while time.monotonic() < end:
            try:
                with anyio.fail_after(limit):
                    await call(limit)
                outcomes.served += 1
            except TimeoutError:
                outcomes.timed_out += 1
            except DoigetError as error:
                outcomes.refused.append(error)
                await anyio.sleep(0.05)

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as tasks:
            for _ in range(clients):
                tasks.start_soon(client)


def _served_or_refused(outcomes: _Outcomes) -> None:
    assert outcomes.timed_out == 0
    assert outcomes.served > 0 and outcomes.refused
    assert {error.code for error in outcomes.refused} == {ErrorCode.RATE_LIMITED}
    assert all(
        error.retry_after is not None and error.retry_after >= 1 for error in outcomes.refused
    )


async def test_under_overload_a_call_is_served_in_time_or_refused_even_when_cold() -> None:
    """Thirty callers at once on a pool that has timed no job yet, whose first job in
    each worker is slow (a model loading): the line the first guess admitted cannot be
    served in time, so the calls that would end late are refused, not timed out."""
    pool = WorkPool(workers=2, queue=32)
    local = threading.local()

    def search() -> None:
        time.sleep(0.05 if getattr(local, "warm", False) else 0.8)
        local.warm = True

    outcomes = _Outcomes()
    try:
        await _overload(outcomes, lambda limit: pool.run(search, within=limit), 1.2, 30, 3.0)
    finally:
        pool.close()
    _served_or_refused(outcomes)


async def test_fast_jobs_of_another_kind_do_not_let_in_slow_ones_that_end_late() -> None:
    """Lookups of a millisecond share the pool with searches of a quarter second: what
    the lookups take says nothing of how long the searches ahead will run."""
    pool = WorkPool(workers=2, queue=32)
    searches, lookups = _Outcomes(), _Outcomes()

    async def search(limit: float) -> None:
        await pool.run(lambda: time.sleep(0.25), within=limit)

    async def lookup(limit: float) -> None:
        await pool.run(lambda: time.sleep(0.001), within=limit)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_overload, searches, search, 1.0, 20, 3.0)
            tasks.start_soon(_overload, lookups, lookup, 1.0, 10, 3.0)
    finally:
        pool.close()
    _served_or_refused(searches)
    assert lookups.timed_out == 0 and lookups.served


async def test_a_job_whose_worker_comes_free_too_late_is_refused_unrun(
    gate: threading.Event,
) -> None:
    """Admitted on an estimate that proves wrong (the job ahead runs far longer than
    any before it), a waiting job is refused once it could no longer end in time,
    before its caller's limit, and never runs."""
    pool = WorkPool(workers=1, queue=4)
    ran: list[int] = []
    started = threading.Event()

    def job() -> None:
        ran.append(1)

    try:
        await pool.run(job)  # timed: next to nothing
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_occupy, pool, gate, started)
            await _until(started)
            began = time.monotonic()
            with pytest.raises(DoigetError) as refused, anyio.fail_after(PATIENCE):
                await pool.run(job, within=2.0)
            waited = time.monotonic() - began
            gate.set()
    finally:
        pool.close()
    assert refused.value.code is ErrorCode.RATE_LIMITED
    assert 1.0 < waited < 2.0  # admitted, then told before its limit ran out
    assert ran == [1]  # the refused job never ran


async def test_under_overload_a_call_apart_is_served_in_time_or_refused_even_when_cold(
    tmp_path: Path,
) -> None:
    """The same with worker processes, whose first job loads what they keep: a job
    whose worker comes free too late is refused there, unrun."""
    from apartjobs import slow_first

    pool = WorkPool(workers=2, queue=32, apart=True)
    await pool.run_apart(os.getpid)  # the processes started: spawning is not the test
    outcomes = _Outcomes()
    try:
        await _overload(
            outcomes,
            lambda limit: pool.run_apart(slow_first, 0.8, 0.05, within=limit),
            1.2,
            30,
            3.0,
        )
    finally:
        pool.close()
    _served_or_refused(outcomes)


async def test_a_job_apart_waits_for_a_free_process_here_and_is_judged_on_what_was_learned(
    tmp_path: Path,
) -> None:
    """A job queues behind one of its kind, the first ever timed, that takes 0.6 s.
    Handed to the process pool at once, it would start as the first ends, on the plan
    made before anything was learned, and end past its 1 s limit; waiting here for the
    process to come free, it is judged on what the first showed: refused, never run."""
    from apartjobs import marked_sleep

    pool = WorkPool(workers=1, queue=4, apart=True)
    await pool.run_apart(os.getpid)  # the process started: spawning is not the test
    first, second = tmp_path / "first", tmp_path / "second"
    outcomes: list[object] = []

    async def later() -> None:
        await anyio.sleep(0.1)  # the first has its process
        try:
            with anyio.fail_after(1.0):
                outcomes.append(await pool.run_apart(marked_sleep, str(second), 0.6, within=1.0))
        except (TimeoutError, DoigetError) as error:
            outcomes.append(error)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(later)
            await pool.run_apart(marked_sleep, str(first), 0.6)
    finally:
        pool.close()
    [outcome] = outcomes
    assert isinstance(outcome, DoigetError), outcome
    assert outcome.code is ErrorCode.RATE_LIMITED
    assert first.exists() and not second.exists()  # refused here, never sent to a process


async def test_what_every_worker_process_needs_first_is_prepared_once_outside_any_limit(
    tmp_path: Path,
) -> None:
    from apartjobs import opened, pid_and_sum

    pool = WorkPool(workers=2, queue=4, apart=True)
    marks = tmp_path / "opened"
    try:
        for _ in range(3):
            await pool.prepare_apart(opened, str(marks))
        # Once in each worker, not once per call, nor twice in one worker.
        assert sorted(set(marks.read_text().split())) == sorted(marks.read_text().split())
        assert len(marks.read_text().split()) == 2
        for _ in range(2):  # a failed preparation is tried again by the next call
            with pytest.raises(TypeError):
                await pool.prepare_apart(pid_and_sum, "not a number")
    finally:
        pool.close()
