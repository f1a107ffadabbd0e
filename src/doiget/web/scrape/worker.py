"""Runs one extraction in a worker process with a CPU time and memory limit.

Reading an untrusted page or document can cost far more than its size suggests (a zip
bomb, a page of a million elements, a PDF whose streams expand without end). Each
extraction therefore runs in a process of its own, forked from a fork server that
holds the readers loaded (multiprocessing's ``forkserver``; a fork takes milliseconds),
under ``RLIMIT_CPU`` (:data:`EXTRACT_CPU_SECONDS`) and ``RLIMIT_AS`` (what it starts
with plus :data:`EXTRACT_MEMORY_BYTES`), with a wall-clock deadline kept by the
server. A worker over a limit is ended and the call answers ``too_large``; whatever it
allocated goes with it, so the server's own memory never holds a document's expansion.
At most one extraction per CPU runs at a time, so the server stays responsive. A worker
writes nothing to stdout (the JSON-RPC channel of a stdio server): fd 1 is pointed at
stderr first.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.web.failure import Kind, web_error
from doiget.web.scrape.limits import (
    EXTRACT_CPU_SECONDS,
    EXTRACT_MEMORY_BYTES,
    EXTRACT_WALL_SECONDS,
)

logger = logging.getLogger("doiget.web")

_CONTEXT: Final = multiprocessing.get_context("forkserver")
_PRELOAD: Final = ["doiget.web.scrape.extraction"]
# Past the soft CPU limit the kernel sends SIGXCPU; past the hard one, SIGKILL.
_CPU_GRACE_SECONDS: Final = 2
_POLL_SECONDS: Final = 0.1
_SLOTS: Final = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
_started = threading.Lock()
_preloaded = False


# -- in the worker ------------------------------------------------------------------------


def _address_space() -> int | None:
    """The process's current virtual size in bytes (None where /proc is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(
        resource.RLIMIT_CPU, (EXTRACT_CPU_SECONDS, EXTRACT_CPU_SECONDS + _CPU_GRACE_SECONDS)
    )
    size = _address_space()
    if size is not None:
        limit = size + EXTRACT_MEMORY_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _outcome(task: str, body: bytes, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``("ok", result)`` or ``("error", code, message, details)``."""
    from doiget.web.scrape.extraction import TASKS

    try:
        return ("ok", TASKS[task](body, *args))
    except DoigetError as error:
        failed = error
    except MemoryError:
        return ("memory",)
    except RecursionError:
        failed = web_error(Kind.UNSUPPORTED, "The content nests deeper than doiget reads.")
    except Exception:
        traceback.print_exc()
        failed = web_error(Kind.INTERNAL, "The extraction failed unexpectedly.")
    return ("error", failed.code.value, failed.message, failed.details)


def _work(conn: Connection, task: str, args: tuple[Any, ...]) -> None:
    """The worker's body: limits first, then read the body from ``conn`` and answer."""
    os.dup2(2, 1)
    _limit_resources()
    try:
        body = conn.recv_bytes()
        outcome = _outcome(task, body, args)
        del body
        conn.send(outcome)
    except MemoryError:
        conn.send(("memory",))
    finally:
        conn.close()


# -- in the server ------------------------------------------------------------------------


def _too_large(what: str) -> DoigetError:
    return web_error(
        Kind.TOO_LARGE,
        f"Reading the {what} was stopped: it needed more than {EXTRACT_CPU_SECONDS} s of "
        f"CPU time or {EXTRACT_MEMORY_BYTES // (1024 * 1024)} MiB of memory, doiget's caps "
        "for one extraction.",
    )


def _wait(conn: Connection, process: Any, stop: threading.Event, what: str) -> tuple[Any, ...]:
    """The worker's answer, or an error when it dies, runs out of time or is cancelled."""
    deadline = time.monotonic() + EXTRACT_WALL_SECONDS
    while True:
        if conn.poll(_POLL_SECONDS):
            try:
                answer: tuple[Any, ...] = conn.recv()
            except (EOFError, OSError):
                break
            return answer
        if stop.is_set():  # the call was cancelled: nobody reads the answer
            return ("cancelled",)
        if not process.is_alive() and not conn.poll():
            break
        if time.monotonic() > deadline:
            raise web_error(
                Kind.TIMEOUT,
                f"Reading the {what} took longer than {EXTRACT_WALL_SECONDS} s and was stopped.",
            )
    process.join()
    if process.exitcode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise _too_large(what)
    logger.warning("extraction worker for a %s ended with status %s", what, process.exitcode)
    raise web_error(
        Kind.UNSUPPORTED,
        f"The {what} could not be read: the reader failed on it (status {process.exitcode}).",
    )


def _start() -> None:
    global _preloaded
    with _started:
        if not _preloaded:
            _CONTEXT.set_forkserver_preload(_PRELOAD)
            _preloaded = True


def _run(
    task: str, body: bytes, args: tuple[Any, ...], what: str, stop: threading.Event
) -> tuple[Any, ...]:
    """Start a worker, hand it ``body``, wait for its answer; the worker never outlives it."""
    with _SLOTS:
        if stop.is_set():
            return ("cancelled",)
        _start()
        conn, child = _CONTEXT.Pipe()
        process = _CONTEXT.Process(target=_work, args=(child, task, args), daemon=True)
        process.start()
        child.close()
        try:
            # A worker that ended before reading it all: _wait says why.
            with contextlib.suppress(OSError):
                conn.send_bytes(body)
            return _wait(conn, process, stop, what)
        finally:
            if process.is_alive():
                process.kill()
            process.join()
            conn.close()


async def extract_isolated(task: str, body: bytes, *args: Any, what: str) -> Any:
    """``extraction.TASKS[task](body, *args)`` in a worker process; its result.

    ``what`` names the content in messages ("DOCX", "HTML page"). Raises the task's
    own errors, ``too_large`` when the worker went over its CPU or memory limit,
    ``timeout`` past the wall-clock deadline.
    """
    stop = threading.Event()
    try:
        outcome = await anyio.to_thread.run_sync(
            _run, task, body, args, what, stop, abandon_on_cancel=True
        )
    except anyio.get_cancelled_exc_class():
        stop.set()
        raise
    if outcome[0] == "ok":
        return outcome[1]
    if outcome[0] == "error":
        _, code, message, details = outcome
        raise DoigetError(ErrorCode(code), message, details=details)
    raise _too_large(what)  # "memory" ("cancelled" reaches no caller)
