"""The head file anchors the end of the provenance chain: a cut tail, an emptied or
deleted log and a rewritten end are each reported, and never written over."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.papers.provenance import ProvenanceLog, head_path, read_head, row_hash, verify


def written_log(tmp_path: Path, rows: int = 20, **kw: int) -> Path:
    path = tmp_path / "provenance.jsonl"
    log = ProvenanceLog(path, **kw)
    for number in range(rows):
        log.append("fetch", ref=f"10.1000/{number}", result="ok")
    log.close()
    return path


def cut_tail(path: Path, rows: int) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-rows]))


def test_the_head_records_the_last_row(tmp_path: Path) -> None:
    path = written_log(tmp_path)
    last = json.loads(path.read_bytes().splitlines()[-1])
    head = read_head(path)
    assert head is not None
    assert (head.seq, head.this_hash) == (last["seq"], last["this_hash"])
    report = verify(path)
    assert report.ok and report.head_rows == report.rows == 22


@pytest.mark.parametrize("removed", [1, 10, 21])
def test_a_cut_tail_is_reported_with_the_missing_rows(tmp_path: Path, removed: int) -> None:
    path = written_log(tmp_path)
    cut_tail(path, removed)
    report = verify(path)
    assert not report.ok
    assert report.rows == 22 - removed
    assert report.reason is not None and "missing from the end" in report.reason
    assert str(21) in report.reason and str(22 - removed) in report.reason


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda path: path.write_bytes(b""), "the log is empty"),
        (lambda path: path.unlink(), "the log is missing"),
        (lambda path: head_path(path).unlink(), "head file"),
        (lambda path: head_path(path).write_text("{"), "unreadable"),
    ],
)
def test_an_emptied_or_deleted_log_or_head_is_reported(
    tmp_path: Path, damage: Callable[[Path], None], words: str
) -> None:
    path = written_log(tmp_path)
    damage(path)
    report = verify(path)
    assert not report.ok
    assert report.reason is not None and words in report.reason


def test_a_deleted_rotated_segment_is_reported(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=40, max_bytes=2000)
    segments = sorted(tmp_path.glob("provenance.jsonl.[0-9]*"))
    assert len(segments) >= 2
    segments[0].unlink()
    assert not verify(path).ok


def test_a_rewritten_end_does_not_match_the_head(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])
    last["result"] = "forged"
    last["this_hash"] = row_hash(last)  # a consistent chain, but not the one recorded
    path.write_bytes(b"\n".join([*lines[:-1], json.dumps(last).encode()]) + b"\n")
    report = verify(path)
    assert not report.ok
    assert report.reason is not None and "rewritten" in report.reason


def test_nothing_is_appended_after_a_cut(tmp_path: Path) -> None:
    path = written_log(tmp_path)
    cut_tail(path, 5)
    size = path.stat().st_size
    with pytest.raises(DoigetError) as caught:
        ProvenanceLog(path).append("fetch", ref="10.1000/x", result="ok")
    assert caught.value.code is ErrorCode.LOG_ERROR
    assert "head file records" in caught.value.message
    assert path.stat().st_size == size  # the cut stays visible
    assert not verify(path).ok


def test_a_head_one_row_behind_is_a_crash_between_writes_not_a_cut(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    rows = [json.loads(line) for line in path.read_bytes().splitlines()]
    before_last = rows[-2]
    head_path(path).write_text(
        json.dumps({"seq": before_last["seq"], "this_hash": before_last["this_hash"]})
    )
    assert verify(path).ok
    ProvenanceLog(path).append("fetch", ref="10.1000/next", result="ok")
    report = verify(path)
    assert report.ok and report.head_rows == report.rows


def test_a_fresh_install_with_no_log_verifies(tmp_path: Path) -> None:
    report = verify(tmp_path / "provenance.jsonl")
    assert report.ok and report.rows == 0 and report.head_rows is None


def test_a_row_with_a_duplicate_key_fails_verification(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=2)
    lines = path.read_bytes().splitlines()
    row = json.loads(lines[1])
    # The repeated key comes first: a parser that keeps the last value sees the
    # original row, whose hash still matches.
    forged = b'{"result":"forged",' + json.dumps(row, separators=(",", ":")).encode()[1:]
    assert json.loads(forged) == row
    path.write_bytes(b"\n".join([lines[0], forged, *lines[2:]]) + b"\n")
    report = verify(path)
    assert not report.ok
    assert report.first_broken == 1
    assert report.reason is not None and "result" in report.reason
