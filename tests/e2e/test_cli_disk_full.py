"""A full disk under the store or the provenance log: STORE_ERROR / LOG_ERROR, exit 4,
a message naming the path and what to do, no traceback, nothing half written; and
once there is room again, the next command and audit-log work.

The disk is a small tmpfs mounted inside the test's own mount namespace (``unshare
-m``), so it is real ENOSPC from the kernel and nothing outside the test sees it.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from addpdfutil import route_sources

from bombs import pdf_many_pages

from cliutil import clean_env, command
from papersutil import NATURE, route_nature
from replay import ReplayUpstream


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(
    not _can_mount_tmpfs(), reason="needs root and unshare -m to mount a private tmpfs"
)


def in_small_disk(
    mountpoint: Path, size: str, steps: list[str], env: dict[str, str], out: Path
) -> list[tuple[int, str, str]]:
    """Mount a ``size`` tmpfs at ``mountpoint`` in a private mount namespace and run
    the shell ``steps`` there; a step starting with ``doiget`` runs the program. Gives
    (exit status, stdout, stderr) of every doiget step, in order."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    where = shlex.quote(str(mountpoint))
    lines = [f"mount -t tmpfs -o size={size},mode=0700 tmpfs {where} || exit 99"]
    runs = 0
    for step in steps:
        if step.startswith("doiget "):
            argv = " ".join(shlex.quote(part) for part in command(*shlex.split(step)[1:]))
            base = shlex.quote(str(out / str(runs)))
            lines.append(f"{argv} >{base}.out 2>{base}.err; echo $? >{base}.rc")
            runs += 1
        else:
            lines.append(step)
    subprocess.run(
        ["unshare", "-m", "sh", "-c", "\n".join(lines)],
        env=clean_env(env),
        timeout=300,
        check=True,
    )
    return [
        (
            int((out / f"{n}.rc").read_text()),
            (out / f"{n}.out").read_text(),
            (out / f"{n}.err").read_text(),
        )
        for n in range(runs)
    ]


@needs_tmpfs
@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
def test_a_full_store_disk_fails_the_fetch_with_store_error_and_leaves_nothing(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path, json_flag: bool
) -> None:
    pdf = route_nature(upstream)
    disk = tmp_path / "small"
    store = disk / "papers"
    env = {**doiget_env, "DOIGET_STORE_ROOT": str(store)}
    listing = tmp_path / "listing.txt"
    # Room for the metadata and the index, not for the 330 KB PDF.
    assert len(pdf) > 256 * 1024
    steps = [
        f"doiget {'--json ' if json_flag else ''}fetch {NATURE}",
        f"find {shlex.quote(str(store))} -type f ! -name '*.lock' "
        f"! -path '*/.index/*' >{shlex.quote(str(listing))}",
    ]
    ((status, stdout, stderr),) = in_small_disk(disk, "256k", steps, env, tmp_path / "out")
    assert status == 4, stderr
    said = stdout if json_flag else stderr
    assert "STORE_ERROR" in said and str(store) in said
    assert "No space left on device" in said and "free space" in said
    assert "Traceback" not in stderr and "INTERNAL_ERROR" not in said
    assert listing.read_text() == ""  # no .part, no PDF, no TOML


@needs_tmpfs
def test_a_full_log_disk_rolls_back_the_row_and_the_log_recovers(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_nature(upstream)
    disk = tmp_path / "small"
    log = disk / "state" / "provenance.jsonl"
    env = {**doiget_env, "DOIGET_LOG_PATH": str(log)}
    filler = shlex.quote(str(disk / "filler"))
    size_before = tmp_path / "size-before"
    size_after = tmp_path / "size-after"
    steps = [
        f"doiget resolve {NATURE}",
        f"wc -c <{shlex.quote(str(log))} >{shlex.quote(str(size_before))}",
        # Fill every block left; the log's last page keeps the room a row can start in.
        f"dd if=/dev/zero of={filler} bs=4k 2>/dev/null || true",
        f"doiget resolve {NATURE}",
        f"wc -c <{shlex.quote(str(log))} >{shlex.quote(str(size_after))}",
        "doiget audit-log",
        f"rm {filler}",
        f"doiget resolve {NATURE}",
        "doiget --json audit-log",
    ]
    first, full, audit_full, again, audit = in_small_disk(disk, "64k", steps, env, tmp_path / "out")
    assert first[0] == 0, first[2]
    status, _, stderr = full
    assert status == 4, stderr
    assert "LOG_ERROR" in stderr and str(log.parent) in stderr
    assert "No space left on device" in stderr and "Traceback" not in stderr
    # Nothing torn stays behind: the log is exactly as it was before the failed row.
    assert size_after.read_text() == size_before.read_text()
    assert audit_full[0] == 0, audit_full[1] + audit_full[2]
    assert again[0] == 0, again[2]
    assert audit[0] == 0, audit[1] + audit[2]
    assert '"anchored": true' in audit[1]


@needs_tmpfs
def test_adds_that_fill_the_disk_each_fail_and_leave_no_temp_file(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    disk = tmp_path / "small"
    store = disk / "papers"
    env = {**doiget_env, "DOIGET_STORE_ROOT": str(store)}
    folder = tmp_path / "pdfs"
    folder.mkdir()
    # Three different PDFs of about 300 KB each: none fits in the disk.
    for number in range(3):
        (folder / f"p{number}.pdf").write_bytes(pdf_many_pages(2000 + number))
    assert (folder / "p0.pdf").stat().st_size > 256 * 1024
    listing = tmp_path / "listing.txt"
    steps = [
        f"doiget --json add {shlex.quote(str(folder))}",
        f"doiget --json add {shlex.quote(str(folder / 'p0.pdf'))}",
        f"find {shlex.quote(str(store))} -name '*.part' -o -name '*.tmp' "
        f">{shlex.quote(str(listing))}",
    ]
    folder_run, one_run = in_small_disk(disk, "256k", steps, env, tmp_path / "out")
    assert folder_run[1].count('"STORE_ERROR"') == 3, folder_run[1] + folder_run[2]
    assert "STORE_ERROR" in one_run[1] and "INTERNAL_ERROR" not in one_run[1]
    assert listing.read_text() == ""  # every failed add removed its temp file
