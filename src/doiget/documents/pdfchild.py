"""PDFium reads every PDF in a child process of its own, with a memory and a CPU limit.

A PDF is untrusted: a kilobyte of it can inflate to a gigabyte (a FlateDecode stream,
millions of text operators), a page tree can loop, and PDFium can fail in ways no
check before it sees. Read in a child, a runaway costs that child only: it is stopped
at :data:`MEMORY_BYTES` of address space or :data:`CPU_SECONDS` of CPU (and killed
after :data:`WALL_SECONDS`), and the file it read is refused as too large to read,
while the server, its event loop and every other call go on.

Children are forked from a fork server started on first use with the PDF readers
already imported, so a reading pays a fork, not an interpreter's start and its
imports; the fork server has no threads, so forking it is safe where forking the
server itself is not. The parent sends one job (which function, then its arguments)
and reads one answer over a pipe. Only the functions in :data:`JOBS` run.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Final, TypeVar

T = TypeVar("T")

MEMORY_BYTES: Final = 768 * 1024 * 1024
CPU_SECONDS: Final = 60
WALL_SECONDS: Final = 120
# The functions a child runs: (module, name).
JOBS: Final = frozenset(
    {
        ("doiget.documents.pdftext", "extract"),
        ("doiget.papers.pdfclues", "read_in_child"),
    }
)
_STARTED = threading.Lock()
_context: multiprocessing.context.ForkServerContext | None = None


def _forks() -> multiprocessing.context.ForkServerContext:
    """The fork server's context, its modules preloaded (the server starts on first use)."""
    global _context
    with _STARTED:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            # The main module too: each child would otherwise import it again (as
            # spawn's children do, so it keeps its work under a __main__ guard).
            context.set_forkserver_preload(["__main__", *sorted({m for m, _ in JOBS})])
            _context = context
        return _context


def in_child(job: Callable[..., T], name: str, *args: Any) -> T:
    """``job(*args)`` run in a fresh child process under the limits. Raises
    :class:`~doiget.documents.pdftext.UnusableDocument` when the job refuses the PDF
    called ``name``, fails reading it, or the child is stopped by a limit."""
    from doiget.documents.pdftext import UnusableDocument, unreadable

    key = (job.__module__, job.__name__)
    if key not in JOBS:
        raise ValueError(f"{key} is not a PDF job")
    receiving, sending = multiprocessing.Pipe(duplex=False)
    child = _forks().Process(target=_serve, args=(sending, key, args), daemon=True)
    try:
        child.start()
        sending.close()
        if not receiving.poll(WALL_SECONDS):
            raise _too_large(name, f"took over {WALL_SECONDS} s")
        try:
            outcome, value = receiving.recv()
        except (EOFError, OSError) as exc:  # the child ended without an answer
            raise _too_large(
                name, f"took more than {MEMORY_BYTES // 2**20} MiB or {CPU_SECONDS} s"
            ) from exc
    finally:
        receiving.close()
        if child.is_alive():
            child.kill()
        if child.pid is not None:
            child.join()
            child.close()
    if outcome == "refused":
        raise UnusableDocument(*value)
    if outcome == "failed":
        raise unreadable(name, value)
    return value  # type: ignore[no-any-return]


def _too_large(name: str, what: str) -> Exception:
    from doiget.documents.pdftext import UnusableDocument

    return UnusableDocument(
        "too_large",
        f"{name} {what} to read, more than doiget gives one PDF: it may be built to "
        "exhaust a reader; if it is a real paper, print it to a new PDF and use that",
    )


def _limit() -> None:
    """This process's memory and CPU limits (where the system has them)."""
    try:
        import resource
    except ImportError:  # not on a POSIX system
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))


def _serve(answer_to: Connection, key: tuple[str, str], args: tuple[Any, ...]) -> None:
    """Run the one job and send its answer: its result, its refusal, or how it failed
    (a memory error ends the child without one, as the limit's other ways do)."""
    from doiget.documents.pdftext import UnusableDocument

    # The child shares the server's standard output, which carries nothing but JSON-RPC
    # frames: whatever PDFium or a library prints goes to standard error instead.
    os.dup2(2, 1)
    _limit()
    if key not in JOBS:
        raise SystemExit(2)
    module, function = key
    job = getattr(importlib.import_module(module), function)
    answer: tuple[str, object]
    try:
        answer = ("ok", job(*args))
    except UnusableDocument as refused:
        answer = ("refused", (refused.reason, refused.message))
    except MemoryError:
        raise SystemExit(3) from None
    except Exception as exc:  # PDFium's own errors, whatever their type: the file's fault
        answer = ("failed", f"{type(exc).__name__}: {exc}")
    answer_to.send(answer)
    answer_to.close()
