"""A file a person names to ``doiget import`` or ``doiget verify`` is read only when it
is a regular file, never past its cap whatever size it reports: a device, FIFO or
socket (or a link to one) is INVALID_REF at once, never read, never waited on."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.verify.inputs import MAX_TEXT_BYTES, read_file_text, read_path


def _special(tmp_path: Path, kind: str, name: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        import os

        os.mkfifo(path)
    elif kind == "socket":
        listening = socket.socket(socket.AF_UNIX)
        listening.bind(str(path))
        listening.close()
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(kind)
    return path


def _refused_at_once(read: Callable[[], Any]) -> DoigetError:
    """The error ``read`` raises, within seconds: a read that blocks or never ends fails
    the test instead of hanging it."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(read())
        except Exception as error:  # the test looks at whatever it was
            outcome.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "the read blocked or never ended"
    [error] = outcome
    assert isinstance(error, DoigetError), error
    return error


KINDS = ["/dev/zero", "/dev/urandom", "/dev/null", "fifo", "socket", "folder"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["refs.bib", "refs.ris", "refs.txt", "paper.pdf"])
def test_a_device_fifo_socket_or_folder_is_refused_never_read(
    kind: str, name: str, tmp_path: Path
) -> None:
    path = _special(tmp_path, kind, name)
    error = _refused_at_once(lambda: read_path(path))
    assert error.code is ErrorCode.INVALID_REF
    assert "is a directory" in error.message or "FIFO, socket or device" in error.message


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_the_import_command_reads_the_same_way(kind: str, tmp_path: Path) -> None:
    path = _special(tmp_path, kind, "library.bib")
    error = _refused_at_once(lambda: read_file_text(path))
    assert error.code is ErrorCode.INVALID_REF


def test_a_file_past_the_cap_is_refused_and_a_nul_byte_is_a_coded_error(tmp_path: Path) -> None:
    big = tmp_path / "big.bib"
    big.write_bytes(b"%" * (MAX_TEXT_BYTES + 1))
    assert "more than" in _refused_at_once(lambda: read_file_text(big)).message
    error = _refused_at_once(lambda: read_path(tmp_path / "a\x00.bib"))
    assert error.code is ErrorCode.INVALID_REF and "NUL" in error.message
    missing = _refused_at_once(lambda: read_path(tmp_path / "missing.bib"))
    assert missing.code is ErrorCode.INVALID_REF and "cannot read" in missing.message
