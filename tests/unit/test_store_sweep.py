"""Temp files no write will finish are swept from the store, at a process's first
write or search and then every hour, and nothing else is: not a live write's, not a
link or what it points to, not a FIFO, not a file of another name."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doiget.papers import store as store_module
from doiget.papers.store import STALE_TEMP_SECONDS, SWEEP_EVERY_SECONDS, Store


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                           capture_output=True, text=True)  # fmt: skip
    return int(child.stdout)


def _aged(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def _file(path: Path, age: float = 0.0) -> Path:
    path.write_bytes(b"x")
    return _aged(path, age)


OLD = STALE_TEMP_SECONDS + 60


def test_only_stale_temp_files_of_doigets_own_names_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "papers"
    (root / ".metadata").mkdir(parents=True)
    (root / ".index").mkdir()
    outside = tmp_path / "outside.part"
    outside.write_bytes(b"not the store's")
    mine, dead = os.getpid(), _dead_pid()
    gone = [
        _file(root / f".doiget-{dead}-a1.part"),  # a process that no longer runs
        _file(root / f".doiget-{mine}-b2.part", OLD),  # too old to be a live write
        _file(root / ".metadata" / ".doi_x.toml.k3j4.tmp", OLD),
        _file(root / ".index" / ".library.postings.q8w7.tmp", OLD),  # a postings file cut off
    ]
    kept = [
        _file(root / f".doiget-{mine}-c3.part"),  # a write of this process, in progress
        _file(root / ".metadata" / ".doi_y.toml.z9.tmp"),  # a TOML being written now
        _file(root / ".index" / ".library.postings.r2t5.tmp"),  # postings being written now
        _file(root / ".index" / "library.postings", OLD),
        _file(root / "notes.part", OLD),  # not doiget's name
        _file(root / "doi_z.pdf", OLD),
    ]
    link = root / f".doiget-{dead}-d4.part"
    link.symlink_to(outside)
    _aged(link, OLD)
    fifo = root / f".doiget-{dead}-e5.part"
    os.mkfifo(fifo)
    folder = root / f".doiget-{dead}-f6.part"
    folder.mkdir()

    removed = Store(root).sweep_partials()
    assert sorted(removed) == sorted(gone)
    assert not any(path.exists() for path in gone)
    assert all(path.exists() for path in kept)
    assert link.is_symlink() and outside.read_bytes() == b"not the store's"
    assert fifo.exists() and folder.is_dir()


def test_a_long_running_process_sweeps_again_every_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "papers"
    root.mkdir()
    store = Store(root)
    store.sweep_if_due()  # the first write or search of the process
    left = _file(root / f".doiget-{_dead_pid()}-a1.part")
    store.sweep_if_due()
    assert left.exists()  # not again within the hour
    later = time.monotonic() + SWEEP_EVERY_SECONDS + 1
    monkeypatch.setattr(store_module.time, "monotonic", lambda: later)
    store.sweep_if_due()
    assert not left.exists()
