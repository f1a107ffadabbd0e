"""A row the disk takes only part of is cut back before LOG_ERROR: the log keeps
ending with a whole row, later appends and verification go on as if it never was.

The short write is real: the appending process runs with RLIMIT_FSIZE just above the
log's size, so the kernel writes part of the row and refuses the rest (EFBIG), as a
disk that fills up mid-row does.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from doiget.papers.provenance import ProvenanceLog, read_rows, verify
from logcheck import key_for

_APPEND = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from doiget.errors import DoigetError
    from doiget.papers.provenance import ProvenanceLog
    log = ProvenanceLog(Path(sys.argv[1]), Path(sys.argv[2]))
    try:
        log.append("fetch", ref="10.1000/too-big", result="ok", detail="x" * 400)
    except DoigetError as error:
        print(error.code.value, error.message)
    """
)


def _append_with_file_size_limit(path: Path, limit: int) -> str:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-c", _APPEND, str(path), str(key_for(path))],
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_a_short_write_is_cut_back_and_the_log_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "state" / "provenance.jsonl"
    log = ProvenanceLog(path, key_for(path))
    for number in range(5):
        log.append("fetch", ref=f"10.1000/{number}", result="ok")
    log.close()
    size = path.stat().st_size
    before = path.read_bytes()

    printed = _append_with_file_size_limit(path, size + 100)

    assert printed.startswith("LOG_ERROR"), printed
    assert str(path) in printed and "left as it was before the row" in printed
    assert path.read_bytes() == before  # the 100 bytes that made it to disk are gone
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 7 and report.notes == ()
    ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/after", result="ok")
    report = verify(path, key_for(path))
    assert report.ok and report.anchored and report.rows == 9
    assert [row["ref"] for row in read_rows(path)][-1] == "10.1000/after"
