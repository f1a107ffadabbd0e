"""PDFium reads every PDF in a child process of its own, with a memory and a CPU limit.

A PDF is untrusted: a kilobyte of it can inflate to a gigabyte (a FlateDecode stream,
millions of text operators), a page tree can loop, and PDFium can fail in ways no
check before it sees. Read in a child, a runaway costs that child only: it is stopped
at :data:`MEMORY_BYTES` of address space or :data:`CPU_SECONDS` of CPU (and killed
after :data:`WALL_SECONDS`), and the file it read is refused as too large to read,
while the server, its event loop and every other call go on.

The parent sends one job on the child's stdin (which function, then its arguments,
pickled) and reads one answer from its stdout. Only the functions in :data:`JOBS` run.
"""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys
from collections.abc import Callable
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


def in_child(job: Callable[..., T], name: str, *args: Any) -> T:
    """``job(*args)`` run in a fresh child process under the limits. Raises
    :class:`~doiget.documents.pdftext.UnusableDocument` when the job refuses the PDF
    called ``name``, fails reading it, or the child is stopped by a limit."""
    from doiget.documents.pdftext import UnusableDocument, unreadable

    key = (job.__module__, job.__name__)
    if key not in JOBS:
        raise ValueError(f"{key} is not a PDF job")
    try:
        done = subprocess.run(  # noqa: S603 - this interpreter, this module
            [sys.executable, "-m", __name__],
            input=pickle.dumps((key, args), protocol=pickle.HIGHEST_PROTOCOL),
            capture_output=True,
            timeout=WALL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise _too_large(name, f"took over {WALL_SECONDS} s") from exc
    if done.returncode != 0 or not done.stdout:
        raise _too_large(name, f"took more than {MEMORY_BYTES // 2**20} MiB or {CPU_SECONDS} s")
    outcome, value = pickle.loads(done.stdout)  # noqa: S301 - our own child's answer
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


def _serve() -> None:
    """Run the one job on stdin and answer on stdout: its result, its refusal, or how
    it failed (a memory error ends the child, as the limit's other ways do)."""
    from doiget.documents.pdftext import UnusableDocument

    _limit()
    (module, function), args = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - our parent
    if (module, function) not in JOBS:
        raise SystemExit(2)
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
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve()
