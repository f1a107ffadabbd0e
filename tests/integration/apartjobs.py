"""Jobs the work pool's tests run in its worker processes (module-level, so they pickle
by name and a spawned worker imports them)."""

from __future__ import annotations

import os
import time

from doiget.errors import DoigetError, ErrorCode
from doiget.workpool import abandoned


def pid_and_sum(*numbers: int) -> tuple[int, int]:
    """The worker's pid and the sum of ``numbers``."""
    return os.getpid(), sum(numbers)


def refuse(name: str) -> None:
    """A coded error, as a search raises one."""
    raise DoigetError(
        ErrorCode.INVALID_PROJECT,
        f"Project {name!r} not found.",
        details={"project_id": name, "available_projects": ["a/b"]},
        field="project",
    )


def until_abandoned(patience: float) -> float:
    """Seconds until :func:`abandoned` said the caller gave up (``patience`` at most)."""
    began = time.monotonic()
    while not abandoned() and time.monotonic() - began < patience:
        time.sleep(0.01)
    return time.monotonic() - began


def niceness() -> int:
    """The worker's niceness."""
    return os.nice(0)


def die() -> None:
    """The worker process ends as if killed (out of memory)."""
    os._exit(9)


def wait_for_file(path: str, patience: float) -> None:
    """Hold the worker until ``path`` exists (``patience`` seconds at most)."""
    deadline = time.monotonic() + patience
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)


_ran: list[float] = []


def slow_first(first: float, then: float) -> None:
    """Sleep ``first`` seconds on this process's first call (a worker loading what it
    keeps), ``then`` on every later one."""
    time.sleep(then if _ran else first)
    _ran.append(then)


def opened(path: str) -> None:
    """Mark this process as having run: append its pid to ``path``."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()}\n")


def marked_sleep(path: str, seconds: float) -> None:
    """Append this process's pid to ``path``, then sleep ``seconds``."""
    opened(path)
    time.sleep(seconds)
