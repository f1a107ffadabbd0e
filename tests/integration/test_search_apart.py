"""Searches run apart: in worker processes of the work pool, with the same answers.

A pool made ``apart`` runs find_chunks', query_hybrid's and local search's work in
spawned worker processes (each opening the index by its path), so ranking never holds
the server process's GIL. These tests run the real pool, processes, index, store and
query encoder: answers equal those of the same search in a thread, writes committed
after a worker opened the index show in its next search, and a job's errors, deadline
and death reach its caller as they would from a thread.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from apartjobs import die, niceness, pid_and_sum, refuse, until_abandoned, wait_for_file

from doiget.config import load_settings
from doiget.contract import build, plain
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import ChunkSearch, StoreChunks
from doiget.library.service import Library
from doiget.models import Author, Work
from doiget.papers import contracts as c
from doiget.refs import Ref
from doiget.runtime import load_runtime
from doiget.workpool import APART_NICENESS, WorkPool

from papersutil import make_papers

PATIENCE = 30.0  # upper bound on any wait, never a measurement
PROJECT = "lab/ice"
TEXTS = (
    "sea ice thickness from radar altimetry over the arctic",
    "lake ice phenology and warming winters",
    "glacier flow measured by interferometric radar",
    "snow cover and albedo feedback in the arctic",
    "permafrost carbon release under warming",
    "ice sheet mass balance from gravimetry",
)


@pytest.fixture
async def apart_pool() -> AsyncIterator[WorkPool]:
    pool = WorkPool(2, 8, apart=True)
    yield pool
    pool.close()


async def test_a_job_runs_in_a_lower_priority_process_and_its_errors_come_back_whole(
    apart_pool: WorkPool,
) -> None:
    pid, total = await apart_pool.run_apart(pid_and_sum, 1, 2, 3)
    assert pid != os.getpid() and total == 6
    assert await apart_pool.run_apart(niceness) == min(19, os.nice(0) + APART_NICENESS)
    with pytest.raises(DoigetError) as refused:
        await apart_pool.run_apart(refuse, "lab/none")
    error = refused.value
    assert error.code is ErrorCode.INVALID_PROJECT
    assert error.details == {"project_id": "lab/none", "available_projects": ["a/b"]}
    assert error.field == "project" and "lab/none" in error.message
    assert apart_pool.pending == 0


async def test_a_job_past_its_callers_deadline_is_told_it_was_abandoned(
    apart_pool: WorkPool,
) -> None:
    """No flag reaches another process: the job compares the clock with the deadline
    its caller's time limit set, so work that checks abandoned() stops there."""
    waited = await apart_pool.run_apart(until_abandoned, PATIENCE, within=0.2)
    assert waited < PATIENCE


async def test_a_worker_that_dies_is_replaced_and_the_call_says_retry(
    apart_pool: WorkPool,
) -> None:
    with pytest.raises(DoigetError) as failed:
        await apart_pool.run_apart(die)
    assert failed.value.code is ErrorCode.INTERNAL_ERROR
    assert "retry" in failed.value.message
    assert apart_pool.pending == 0
    assert (await apart_pool.run_apart(pid_and_sum, 4))[1] == 4


async def test_a_dead_worker_fails_the_jobs_beside_it_once_and_the_next_job_runs(
    apart_pool: WorkPool, tmp_path: Path
) -> None:
    """A worker's death breaks the processes it belonged to: each job still running
    there answers INTERNAL_ERROR, once, and later jobs get fresh processes."""
    failed: list[DoigetError] = []

    async def one(job: Any, *args: Any) -> None:
        try:
            await apart_pool.run_apart(job, *args)
        except DoigetError as error:
            failed.append(error)

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(one, wait_for_file, str(tmp_path / "never"), PATIENCE)
            while apart_pool.pending < 1:
                await anyio.sleep(0.01)
            tasks.start_soon(one, die)
    assert [error.code for error in failed] == [ErrorCode.INTERNAL_ERROR] * 2
    assert apart_pool.pending == 0
    assert (await apart_pool.run_apart(pid_and_sum, 5))[1] == 5


async def test_a_full_pool_refuses_a_job_apart_at_once(tmp_path: Path) -> None:
    pool = WorkPool(1, 0, apart=True)
    gate = tmp_path / "go"
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(pool.run_apart, wait_for_file, str(gate), PATIENCE)
            with anyio.fail_after(PATIENCE):
                while pool.pending < 1:
                    await anyio.sleep(0.01)
            with pytest.raises(DoigetError) as refused:
                await pool.run_apart(pid_and_sum, 1)
            assert refused.value.code is ErrorCode.RATE_LIMITED
            gate.touch()
        assert (await pool.run_apart(pid_and_sum, 2))[1] == 2
    finally:
        pool.close()


async def test_a_pool_of_threads_only_has_no_processes_to_run_a_job_in() -> None:
    pool = WorkPool(1, 0)
    with pytest.raises(RuntimeError):
        await pool.run_apart(pid_and_sum, 1)
    pool.close()


def _settings_env(tmp: Path) -> dict[str, str]:
    (tmp / "config.toml").write_text(f'[projects."{PROJECT}"]\nhybrid_enabled = true\n')
    return {
        "DOIGET_CONFIG": str(tmp / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp / "data"),
        "DOIGET_STORE_ROOT": str(tmp / "papers"),
        "DOIGET_LOG_PATH": str(tmp / "log.jsonl"),
    }


def _items(first: int, count: int) -> list[dict[str, Any]]:
    items = []
    for n in range(first, first + count):
        vector = [0.0] * 384
        vector[n % 384], vector[(n * 7 + 1) % 384] = 1.0, 0.5
        items.append(
            {
                "id": f"chunk-{n}",
                "text": f"{TEXTS[n % len(TEXTS)]} (passage {n})",
                "embedding": vector,
                "metadata": {
                    "zotero": {"citekey": f"key{n}", "tags": ["radar"] if n % 3 else ["ice"]},
                    "doc": {"doc_id": f"doc{n % 4}", "page_span": [n, n]},
                    "source": {"doi": f"10.1/{n}", "year": 2000 + n % 20},
                },
            }
        )
    return items


async def _search(library: Library, query: str, hybrid: bool, **fields: Any) -> Any:
    request = build(ChunkSearch, project=PROJECT, query=query, top_k=8, **fields)
    return plain(await library.search(request, hybrid=hybrid))


async def test_passage_searches_apart_answer_as_in_threads_and_see_later_writes(
    tmp_path: Path, apart_pool: WorkPool
) -> None:
    settings = load_settings(_settings_env(tmp_path))
    threads, apart = Library(settings), Library(settings, pool=apart_pool)
    try:
        store = build(StoreChunks, project=PROJECT, items=_items(0, 40))
        await threads.store_chunks(store)
        counts = []
        for hybrid in (False, True):
            for query, filters in (
                ("arctic radar", None),
                ("warming", {"tags": "ice"}),
                ("ice sheet gravimetry", {"year": [2003, 2009, 2015]}),
                ("nothing matches this zzzq", None),
            ):
                expected = await _search(threads, query, hybrid, filters=filters)
                assert await _search(apart, query, hybrid, filters=filters) == expected
                counts.append(expected["count"])
        assert all(counts)  # dense search always ranks every passage the filters keep
        # Written by this process after the workers opened the index: their next
        # search reads the new commit (BM25 statistics and vectors alike).
        await threads.store_chunks(build(StoreChunks, project=PROJECT, items=_items(40, 40)))
        for hybrid in (False, True):
            expected = await _search(
                threads, "permafrost carbon", hybrid, filters={"doc_id": "doc1"}
            )
            found = await _search(apart, "permafrost carbon", hybrid, filters={"doc_id": "doc1"})
            assert found == expected
            assert any(int(item["chunk_id"].split("-")[1]) >= 40 for item in found["items"])
    finally:
        await threads.aclose()
        await apart.aclose()


def _work(n: int) -> Work:
    topic = TEXTS[n % len(TEXTS)]
    return Work(
        source="crossref",
        title=f"{topic.capitalize()}, study {n}",
        authors=(Author(family="Okafor" if n % 2 else "Nakamura", given="A."),),
        venue="Journal of Glaciology",
        year=2000 + n % 20,
        doi=f"10.5555/apart.{n}",
    )


async def test_local_searches_apart_answer_as_in_threads_and_see_new_papers(
    tmp_path: Path, doiget_env: dict[str, str]
) -> None:
    papers = make_papers(doiget_env)
    pool = load_runtime({**doiget_env, "DOIGET_SEARCH_PROCESSES": "1"}).pool("papers")
    assert pool.apart
    try:
        for n in range(30):
            ref = Ref("doi", f"10.5555/apart.{n}")
            papers.store.write_metadata(ref, _work(n), doiget_fields={"source": "crossref"})
        queries = ("arctic radar", "Okafor warming", "glac", "ice 2005", "nothing zzzq")
        counts = []
        for query in queries:
            request = c.LocalSearch(query=query, limit=7)
            found = plain(await papers.search_in(pool, request))
            assert found == plain(papers.search(request))
            counts.append(found["count"])
        assert all(counts[:-1]) and counts[-1] == 0
        # A paper stored later is indexed by the serving process; the workers see it.
        ref = Ref("doi", "10.5555/apart.99")
        papers.store.write_metadata(
            ref,
            Work(source="crossref", title="Arctic radar sounding of subglacial lakes"),
            doiget_fields={"source": "crossref"},
        )
        papers.index.ensure_fresh()
        found = plain(await papers.search_in(pool, c.LocalSearch(query="subglacial", limit=5)))
        assert [hit["ref"] for hit in found["results"]] == ["10.5555/apart.99"]
    finally:
        pool.close()
        await papers.aclose()
