"""The signed head anchors the end of the provenance chain: a cut tail, a head rebuilt
from the log's own rows or pointed at another row, a deleted head, a deleted log (with
or without its head) and a lost key are each reported, and never written over. A log
from an earlier release verifies on its plain chain and is anchored from its next row."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.papers.anchor import AnchorKey, head_path, read_head, record_path, write_head
from doiget.papers.provenance import ProvenanceLog, row_hash, verify
from logcheck import key_for


def written_log(tmp_path: Path, rows: int = 20, **kw: int) -> Path:
    path = tmp_path / "provenance.jsonl"
    log = ProvenanceLog(path, key_for(path), **kw)
    for number in range(rows):
        log.append("fetch", ref=f"10.1000/{number}", result="ok")
    log.close()
    return path


def rows_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def cut_tail(path: Path, rows: int) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-rows]))


def plain_head(path: Path, row: dict[str, object]) -> None:
    """A head as anyone who can read the log can write it (no key)."""
    head_path(path).write_text(json.dumps({"seq": row["seq"], "this_hash": row["this_hash"]}))


def broken(path: Path, *words: str) -> str:
    report = verify(path, key_for(path))
    assert not report.ok, report
    assert report.reason is not None
    for word in words:
        assert word in report.reason, report.reason
    return report.reason


def append_refused(path: Path, *words: str) -> None:
    size = path.stat().st_size if path.exists() else None
    with pytest.raises(DoigetError) as caught:
        ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/x", result="ok")
    assert caught.value.code is ErrorCode.LOG_ERROR
    for word in words:
        assert word in caught.value.message, caught.value.message
    assert (path.stat().st_size if path.exists() else None) == size  # nothing written over


def test_the_head_records_the_last_row_signed_with_a_key_made_on_first_use(
    tmp_path: Path,
) -> None:
    path = written_log(tmp_path)
    last = rows_of(path)[-1]
    head = read_head(path)
    assert head is not None and head.signed
    assert (head.seq, head.this_hash) == (last["seq"], last["this_hash"])
    key = key_for(path)
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    assert not key.is_relative_to(path.parent)
    report = verify(path, key)
    assert report.ok and report.anchored and report.head_rows == report.rows == 22


@pytest.mark.parametrize("removed", [1, 3, 10, 21])
def test_a_cut_tail_is_reported_with_the_missing_rows(tmp_path: Path, removed: int) -> None:
    path = written_log(tmp_path)
    cut_tail(path, removed)
    reason = broken(path, "missing from the end")
    assert str(21) in reason and str(22 - removed) in reason
    append_refused(path, "head file records row 21")


@pytest.mark.parametrize("removed", [1, 3])
def test_a_head_rebuilt_from_the_cut_logs_own_last_row_does_not_verify(
    tmp_path: Path, removed: int
) -> None:
    path = written_log(tmp_path)
    cut_tail(path, removed)
    signed = json.loads(head_path(path).read_text())
    last = rows_of(path)[-1]
    # Keep the old key id and signature, or drop them (an unsigned head): neither passes.
    forged = {**signed, "seq": last["seq"], "this_hash": last["this_hash"]}
    head_path(path).write_text(json.dumps(forged))
    broken(path, "signature does not verify")
    append_refused(path, "signature does not verify")
    plain_head(path, last)
    broken(path, "not signed")
    append_refused(path, "not signed")


@pytest.mark.parametrize("row", [0, 5, 20])
def test_a_head_pointed_at_an_earlier_row_does_not_verify(tmp_path: Path, row: int) -> None:
    path = written_log(tmp_path)
    earlier = rows_of(path)[row]
    signed = json.loads(head_path(path).read_text())
    head_path(path).write_text(
        json.dumps({**signed, "seq": earlier["seq"], "this_hash": earlier["this_hash"]})
    )
    broken(path, "signature does not verify")
    cut_tail(path, 21 - row)  # the log cut to match the forged head changes nothing
    broken(path, "signature does not verify")
    append_refused(path, "signature does not verify")


def test_a_signed_head_copied_from_earlier_is_a_head_put_back(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    saved = head_path(path).read_bytes()
    ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/more", result="ok")
    ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/more", result="ok")
    head_path(path).write_bytes(saved)
    broken(path, "put back to an earlier row")
    append_refused(path, "records row 4")


def test_a_cut_log_with_its_head_deleted_then_appended_to_is_caught(tmp_path: Path) -> None:
    """head -n -3 log > t && mv t log && rm log.head && doiget resolve REF: the append
    is refused and audit-log fails, naming the missing head."""
    path = written_log(tmp_path)
    cut_tail(path, 3)
    head_path(path).unlink()
    append_refused(path, "head file", "missing", "anchored at row 0")
    broken(path, "head file", "missing")


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda path: path.write_bytes(b""), ("the log is empty", "22 rows")),
        (lambda path: path.unlink(), ("the log is missing", "22 rows")),
        (lambda path: head_path(path).unlink(), ("head file", "is missing")),
        (lambda path: head_path(path).write_text("{"), ("unreadable",)),
        (
            lambda path: (path.unlink(), head_path(path).unlink()),
            ("head file", "is missing", "anchored at row 0"),
        ),
        (
            lambda path: shutil.rmtree(path.parent),
            ("head file", "is missing", "anchored at row 0"),
        ),
    ],
    ids=["emptied", "deleted-log", "deleted-head", "garbled-head", "log-and-head", "folder"],
)
def test_an_emptied_or_deleted_log_or_head_is_reported(
    tmp_path: Path, damage: Callable[[Path], None], words: tuple[str, ...]
) -> None:
    path = written_log(tmp_path)
    damage(path)
    broken(path, *words)


def test_a_lost_or_replaced_key_is_reported(tmp_path: Path) -> None:
    path = written_log(tmp_path)
    key = key_for(path)
    original = key.read_bytes()
    key.write_bytes(bytes(32))
    broken(path, "not with the key at")
    append_refused(path, "DOIGET_PROVENANCE_KEY_PATH")
    key.unlink()
    broken(path, "no key at")
    key.write_bytes(original[:10])
    broken(path, "holds 10 bytes")
    key.write_bytes(original)
    assert verify(path, key).ok


def test_a_head_one_row_behind_is_a_crash_between_writes_not_a_cut(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    before_last = rows_of(path)[-2]
    secret = AnchorKey(key_for(path)).read()
    assert secret is not None
    write_head(path, secret, int(str(before_last["seq"])), str(before_last["this_hash"]))
    assert verify(path, key_for(path)).ok
    ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/next", result="ok")
    report = verify(path, key_for(path))
    assert report.ok and report.head_rows == report.rows


def test_a_fresh_install_with_no_log_verifies(tmp_path: Path) -> None:
    path = tmp_path / "provenance.jsonl"
    report = verify(path, key_for(path))
    assert report.ok and report.rows == 0 and report.head_rows is None
    assert not key_for(path).exists()  # verifying makes no key


@pytest.mark.parametrize("old_head", [False, True], ids=["no-head", "unsigned-head"])
def test_a_log_from_an_earlier_release_verifies_and_is_anchored_from_its_next_row(
    tmp_path: Path, old_head: bool
) -> None:
    path = written_log(tmp_path, rows=4)
    # What an earlier release left: no key, no anchor record, an unsigned head or none.
    shutil.rmtree(key_for(path).parent)
    if old_head:
        plain_head(path, rows_of(path)[-1])
    else:
        head_path(path).unlink()
    report = verify(path, key_for(path))
    assert report.ok and not report.anchored and report.rows == 6
    assert any("earlier release" in note for note in report.notes)
    ProvenanceLog(path, key_for(path)).append("fetch", ref="10.1000/new", result="ok")
    report = verify(path, key_for(path))
    assert report.ok and report.anchored and report.rows == 8 and report.notes == ()
    assert record_path(AnchorKey(key_for(path)), path).exists()
    cut_tail(path, 1)
    broken(path, "missing from the end")


def test_a_deleted_rotated_segment_is_reported(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=40, max_bytes=2000)
    segments = sorted(tmp_path.glob("provenance.jsonl.[0-9]*"))
    assert len(segments) >= 2
    segments[0].unlink()
    assert not verify(path, key_for(path)).ok


def test_a_rewritten_end_does_not_match_the_head(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])
    last["result"] = "forged"
    last["this_hash"] = row_hash(last)  # a consistent chain, but not the one recorded
    path.write_bytes(b"\n".join([*lines[:-1], json.dumps(last).encode()]) + b"\n")
    broken(path, "rewritten")


def test_a_log_replaced_by_a_fresh_chain_is_reported(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=3)
    path.unlink()
    head_path(path).unlink()
    # A new chain written without the key's anchor record: its own head is unsigned.
    other = tmp_path / "elsewhere" / "provenance.jsonl"
    ProvenanceLog(other, key_for(other)).append("fetch", ref="10.1000/y", result="ok")
    shutil.copy(other, path)
    broken(path, "is missing", "anchored at row 0")


def test_a_row_with_a_duplicate_key_fails_verification(tmp_path: Path) -> None:
    path = written_log(tmp_path, rows=2)
    lines = path.read_bytes().splitlines()
    row = json.loads(lines[1])
    # The repeated key comes first: a parser that keeps the last value sees the
    # original row, whose hash still matches.
    forged = b'{"result":"forged",' + json.dumps(row, separators=(",", ":")).encode()[1:]
    assert json.loads(forged) == row
    path.write_bytes(b"\n".join([lines[0], forged, *lines[2:]]) + b"\n")
    report = verify(path, key_for(path))
    assert not report.ok
    assert report.first_broken == 1
    assert report.reason is not None and "result" in report.reason
