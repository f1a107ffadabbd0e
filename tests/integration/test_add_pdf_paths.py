"""Paths doiget_add_pdf and ``doiget add`` cannot read are each that path's own coded
error, and the rest of the batch is added: a name that is not UTF-8, a NUL byte, a
FIFO, a device, a socket, a link to a device, a folder doiget may not list."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from addpdfutil import add_pdfs, route_sources

from doiget.errors import DoigetError, ErrorCode
from doiget.papers.adding import pdfs_in, read_local_pdf

from pdfmaker import write_paper_pdf
from replay import ReplayUpstream


def _good(folder: Path, name: str = "good.pdf") -> Path:
    return write_paper_pdf(folder / name, "Untitled Musings on Nothing", ["Ann Other"])


def _specials(folder: Path) -> dict[str, Path]:
    """Things in a folder that are not regular files, each with a .pdf name."""
    fifo = folder / "fifo.pdf"
    os.mkfifo(fifo)
    (folder / "zero.pdf").symlink_to("/dev/zero")
    (folder / "random.pdf").symlink_to("/dev/urandom")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(folder / "socket.pdf"))
    listening.close()
    return {name: folder / f"{name}.pdf" for name in ("fifo", "zero", "random", "socket")}


@pytest.mark.parametrize("allowed", [False, True], ids=["command line", "over MCP"])
def test_fifos_devices_and_sockets_are_refused_alone_and_never_read(
    allowed: bool, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    folder = tmp_path / "papers"
    folder.mkdir()
    specials = _specials(folder)
    _good(folder)
    named = [str(path) for path in specials.values()] + ["/dev/zero", str(folder)]
    roots = [folder, Path("/dev")] if allowed else None
    result = add_pdfs(doiget_env, named, allowed=roots)  # returns: nothing blocks or reads forever
    rows = [
        (Path(row.path or "").name, row.error.code if row.error else "ok") for row in result.results
    ]
    assert rows[:5] == [(f"{n}.pdf", "INVALID_REF") for n in specials] + [("zero", "INVALID_REF")]
    assert ("good.pdf", "ok") in rows
    assert result.summary.total == len(rows) and result.summary.failed == len(rows) - 1
    for row in result.results:
        if row.error is not None:
            assert "regular file" in row.error.message or "FIFO" in row.error.message, row


@pytest.mark.parametrize("allowed", [False, True], ids=["command line", "over MCP"])
def test_a_name_that_is_not_utf8_and_a_nul_byte_fail_alone(
    allowed: bool, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    folder = tmp_path / "papers"
    folder.mkdir()
    made = _good(tmp_path, "made.pdf")
    (folder / "a-not-a-pdf.pdf").write_bytes(b"plain text")
    with open(os.fsencode(folder) + b"/b-\xff\xfe.pdf", "wb") as handle:
        handle.write(made.read_bytes())
    with open(os.fsencode(folder) + b"/c-\xff-not-a-pdf.pdf", "wb") as handle:
        handle.write(b"plain text")
    named = [str(folder), str(folder / "a\x00.pdf"), str(folder) + "\x00", "\x00"]
    result = add_pdfs(doiget_env, named, allowed=[tmp_path] if allowed else None)
    document = json.loads(result.model_dump_json())  # the reply is JSON text as sent
    rows = [(row["path"], row["error"]["code"] if row.get("error") else "ok")
            for row in document["results"]]  # fmt: skip
    assert [code for _, code in rows] == ["INVALID_REF", "ok", *["INVALID_REF"] * 4], rows
    assert rows[1][0].endswith("b-\\xff\\xfe.pdf") and "\\xff" in rows[2][0]
    assert all("NUL" in row["error"]["message"] for row in document["results"][3:])
    assert document["results"][1]["title"] == "Untitled Musings on Nothing"


def _deny(monkeypatch: pytest.MonkeyPatch, searched: Path, listed: Sequence[Path]) -> None:
    """What the system answers a user without permission, for a test run as root (who
    passes every permission check): nothing below ``searched`` can be looked at, and the
    folders ``listed`` cannot be listed."""
    import errno

    def denied(name: object) -> bool:
        path = Path(os.fsdecode(name)) if isinstance(name, str | bytes | Path) else None
        return path is not None and path.is_relative_to(searched) and path != searched

    def guarded(call: Callable[..., Any], check: Callable[[object], bool]) -> Callable[..., Any]:
        def run(name: Any, *args: Any, **kwargs: Any) -> Any:
            if check(name):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(name))
            return call(name, *args, **kwargs)

        return run

    monkeypatch.setattr(os, "stat", guarded(os.stat, denied))
    monkeypatch.setattr(os, "open", guarded(os.open, denied))
    monkeypatch.setattr(
        os, "scandir", guarded(os.scandir, lambda name: Path(os.fsdecode(name)) in listed)
    )


def test_a_file_doiget_may_not_look_at_is_its_own_error_even_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("locked", "unlisted", "papers", "papers/sub"):
        (tmp_path / name).mkdir()
    for name in ("locked/inside.pdf", "papers/a.pdf", "papers/sub/b.pdf"):
        (tmp_path / name).write_bytes(b"%PDF-1.4\n")
    unlisted = [tmp_path / "unlisted", tmp_path / "papers" / "sub"]
    if os.geteuid() == 0:
        _deny(monkeypatch, tmp_path / "locked", unlisted)
    else:
        (tmp_path / "locked").chmod(0o644)  # listed, never searched
        for folder in unlisted:
            folder.chmod(0o311)  # searched, never listed
    try:
        answers = {}
        for name in ("locked/inside.pdf", "unlisted", "papers"):
            refused: dict[Path, DoigetError] = {}
            found = pdfs_in(tmp_path / name, refused)
            answers[name] = [
                (str(path.relative_to(tmp_path)), refused[path].code if path in refused else None)
                for path in found
            ]
        with pytest.raises(DoigetError) as unread:
            read_local_pdf(tmp_path / "locked" / "inside.pdf", None)
    finally:
        for folder in ("locked", "unlisted", "papers/sub"):
            (tmp_path / folder).chmod(0o755)
    assert answers["locked/inside.pdf"] == [("locked/inside.pdf", ErrorCode.NOT_FOUND)]
    assert answers["unlisted"] == [("unlisted", ErrorCode.NOT_FOUND)]
    assert answers["papers"] == [("papers/a.pdf", None), ("papers/sub", ErrorCode.NOT_FOUND)]
    assert unread.value.code is ErrorCode.NOT_FOUND
    assert "Permission denied" in unread.value.message
