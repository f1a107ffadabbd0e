"""The provenance log: chain, tamper detection, rotation, concurrency, fail-closed."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doiget.errors import DoigetError, ErrorCode
from doiget.papers.provenance import GENESIS, ProvenanceLog, log_files, read_rows, row_hash, verify
from logcheck import key_for


def write_rows(path: Path, count: int, **kw: int) -> ProvenanceLog:
    log = ProvenanceLog(path, key_for(path), **kw)
    for number in range(count):
        log.append(
            "fetch", ref=f"10.1000/{number}", source="oa-publisher", result="ok", size=number
        )
    return log


def test_rows_chain_from_genesis_and_verify(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 3).close()
    rows = list(read_rows(path))
    assert [row["event"] for row in rows] == [
        "session_start",
        "fetch",
        "fetch",
        "fetch",
        "session_end",
    ]
    assert rows[0]["prev_hash"] == GENESIS
    for previous, row in itertools.pairwise(rows):
        assert row["prev_hash"] == previous["this_hash"]
        assert row["this_hash"] == row_hash(row)
    assert [row["seq"] for row in rows] == list(range(5))
    assert len({row["session_id"] for row in rows}) == 1
    report = verify(path, key_for(path))
    assert (report.ok, report.rows, report.files) == (True, 5, 1)


def test_a_second_session_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 1).close()
    write_rows(path, 1).close()
    rows = list(read_rows(path))
    assert len({row["session_id"] for row in rows}) == 2
    assert verify(path, key_for(path)).ok


@pytest.mark.parametrize("tamper", ["edit", "delete", "swap", "garbage"])
def test_any_tampering_is_reported_at_the_first_broken_row(tmp_path: Path, tamper: str) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 4)
    lines = path.read_text().splitlines()
    if tamper == "edit":
        row = json.loads(lines[2])
        row["ref"] = "10.1000/forged"
        lines[2] = json.dumps(row)
    elif tamper == "delete":
        del lines[2]
    elif tamper == "swap":
        lines[2], lines[3] = lines[3], lines[2]
    else:
        lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    report = verify(path, key_for(path))
    assert not report.ok
    assert (report.first_broken, report.line) == (2, 3)
    assert report.reason


def test_a_recomputed_hash_still_breaks_the_next_link(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 3)
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["size"] = 999
    row["this_hash"] = row_hash(row)
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    assert verify(path, key_for(path)).first_broken == 2


def test_rotation_keeps_one_chain_across_files(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 12, max_bytes=1500).close()
    files = log_files(path)
    assert len(files) > 2 and files[-1] == path
    assert all(file.stat().st_size <= 1500 for file in files)
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 14 and report.files == len(files)
    (files[1]).write_text(files[1].read_text().replace("10.1000/", "10.9999/", 1))
    broken = verify(path, key_for(path))
    assert not broken.ok and broken.file == str(files[1])


def _append_many(path: str, count: int) -> None:
    write_rows(Path(path), count).close()


def test_concurrent_processes_never_fork_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(path), 15)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 4 * 17


def test_threads_sharing_one_log_never_fork_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = ProvenanceLog(path, key_for(path))

    def append_some(worker: int) -> None:
        for number in range(10):
            log.append("fetch", ref=f"10.1000/{worker}.{number}", result="ok")

    threads = [threading.Thread(target=append_some, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    log.close()
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 1 + 4 * 10 + 1
    assert [row["event"] for row in read_rows(path)].count("session_start") == 1


def test_unwritable_log_fails_closed_with_log_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the log directory should be")
    log = ProvenanceLog(blocker / "log.jsonl", key_for(blocker / "log.jsonl"))
    with pytest.raises(DoigetError) as failed:
        log.append("fetch", ref="10.1000/x", result="ok")
    assert failed.value.code is ErrorCode.LOG_ERROR
    assert "DOIGET_LOG_PATH" in failed.value.message


def test_a_torn_last_row_is_cut_by_the_next_append_and_the_log_verifies(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 2)
    with path.open("ab") as handle:
        handle.write(b'{"seq":3,"ts":"20')  # a crash mid-row
    pending = verify(path, key_for(path))
    assert pending.ok and pending.rows == 3
    assert any("interrupted write" in note for note in pending.notes)
    write_rows(path, 1)
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 5 and report.notes == ()
    assert b'"ts":"20\n' not in path.read_bytes() and path.read_bytes().endswith(b"\n")
    assert list(read_rows(path))[-1]["event"] == "fetch"


def test_a_torn_line_an_earlier_release_closed_is_passed_over(tmp_path: Path) -> None:
    """Earlier releases closed a torn row with a newline and went on after it: the
    chain runs past that line, so it is the remains of a write, not a break."""
    path = tmp_path / "log.jsonl"
    write_rows(path, 2)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b'{"seq":2,"ts":"20\n', *lines[2:]]))
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 3
    assert any("line 3" in note and "interrupted write" in note for note in report.notes)


def test_unknown_fields_are_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        ProvenanceLog(tmp_path / "log.jsonl", key_for(tmp_path / "log.jsonl")).append(
            "fetch", api_key="x"
        )


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=200), min_size=1, max_size=8))
def test_verify_and_read_rows_survive_any_bytes(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "fuzz.jsonl"
    data = b"\n".join(lines)
    path.write_bytes(data)
    report = verify(path, key_for(path))
    # Random bytes never form a chain: only a file with no whole line verifies (what
    # is there is an unfinished write, which the next append cuts).
    assert report.ok == (b"\n" not in data)
    if not report.ok:
        assert report.first_broken == 0 and report.line == 1 and report.reason
    assert all(isinstance(row, dict) for row in read_rows(path))


def test_an_unreadable_last_row_blocks_appends_with_log_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    write_rows(path, 1)
    with path.open("ab") as handle:
        handle.write(b"garbage\n")
    with pytest.raises(DoigetError) as failed:
        write_rows(path, 1)
    assert failed.value.code is ErrorCode.LOG_ERROR
