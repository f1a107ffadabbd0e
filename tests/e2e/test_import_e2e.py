"""``doiget import`` and doiget_import_bibliography end to end: the same document from
both faces, progress over MCP, ``--fetch``, and files that cannot be imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importutil import (
    ATTENTION,
    CLOSED,
    JABREF,
    PAPERPILE,
    PNAS,
    fabricated,
    route_library,
    wrong_year,
)
from mcputil import mcp_session

from pacing import unpaced_env

from cliutil import doiget
from replay import ReplayUpstream

TEXT = JABREF.replace("file      = {:papers/Adak2001.pdf:PDF},", "") + wrong_year() + fabricated()


@pytest.fixture
def doiget_env(doiget_env: dict[str, str]) -> dict[str, str]:
    """The programs run here space their requests by no gap: each entry asks its
    sources once or more, and the rows are the subject (see tests/pacing.py)."""
    return unpaced_env(doiget_env)


def _elsewhere(env: dict[str, str], tmp_path: Path, name: str) -> dict[str, str]:
    """``env`` with a library and data directory of its own."""
    root = tmp_path / name
    return {
        **env,
        "DOIGET_STORE_ROOT": str(root / "store"),
        "DOIGET_DATA_DIR": str(root / "data"),
        "DOIGET_LOG_PATH": str(root / "provenance.jsonl"),
    }


async def test_the_command_prints_the_document_the_tool_returns(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_library(upstream)
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    async with mcp_session(doiget_env) as session:
        result = await session.call_tool(
            "doiget_import_bibliography", {"text": TEXT}, progress_callback=progress
        )
    from_tool = result.structured_content
    assert from_tool is not None and not result.is_error
    bib = tmp_path / "library.bib"
    bib.write_text(TEXT, encoding="utf-8")
    done = doiget("import", str(bib), "--json", env=_elsewhere(doiget_env, tmp_path, "cli"))
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.strip()]
    assert json.loads(line) == from_tool
    rows = [(row["key"], row["status"], row.get("ref")) for row in from_tool["results"]]
    assert rows == [
        ("Adak2001", "imported", CLOSED),
        ("makris2019", "corrected", PNAS),
        ("gui2021", "not_found", None),
    ]
    assert from_tool["counts"] == {
        "imported": 1, "already_present": 0, "corrected": 1, "not_found": 1, "uncertain": 0,
        "no_identifier": 0, "unreadable": 0,
    }  # fmt: skip
    assert [done for done, _ in seen] == [1, 2, 3, 4, 5, 6] and seen[-1][1] == 6


def test_fetch_stores_the_pdfs_and_text_output_lists_every_entry(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    served = route_library(upstream)
    bib = tmp_path / "paperpile.bib"
    bib.write_text(PAPERPILE + fabricated(), encoding="utf-8")
    done = doiget("import", str(bib), "--fetch", env=doiget_env)
    assert done.returncode == 0, done.stderr
    assert "imported" in done.stdout and "Vaswani2017-ab" in done.stdout
    assert "not_found" in done.stdout and "gui2021" in done.stdout
    assert "1 imported, 1 not_found" in done.stdout
    stored = Path(doiget_env["DOIGET_STORE_ROOT"]) / f"arxiv_{ATTENTION}.pdf"
    assert stored.read_bytes() == served
    bib_export = doiget("bib", ATTENTION, env=doiget_env)
    assert (
        "@article{Vaswani2017-ab," in bib_export.stdout or "{Vaswani2017-ab," in bib_export.stdout
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("missing.bib", None),
        ("binary.bib", bytes(range(256)) * 64),
        ("notes.txt", b"Vaswani A. Attention is all you need. NeurIPS 2017.\n"),
        ("huge.bib", b"%" * (8_000_001)),
        ("many.bib", "".join(f"@article{{k{i}, title={{T{i}}}}}\n" for i in range(101)).encode()),
    ],
)
def test_a_file_that_cannot_be_imported_is_a_coded_error_and_json_only(
    name: str,
    content: bytes | None,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    tmp_path: Path,
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    done = doiget("import", str(path), "--json", env=doiget_env)
    answer = json.loads(done.stdout)  # the whole of stdout is one JSON document
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done
    assert answer["ok"] is False and answer["error"]["code"] == "INVALID_REF", answer
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("command", "target", "name"),
    [
        ("import", "/dev/zero", "zero.bib"),
        ("import", "/dev/urandom", "random.ris"),
        ("verify", "/dev/zero", "zero.txt"),
        ("verify", "fifo", "refs.bib"),
        ("batch", "/dev/zero", "refs.txt"),
    ],
)
def test_a_device_or_fifo_is_refused_at_once_by_both_commands(
    command: str,
    target: str,
    name: str,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    tmp_path: Path,
) -> None:
    import os

    path = tmp_path / name
    if target == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(target)
    done = doiget(command, str(path), "--json", env=doiget_env)
    answer = json.loads(done.stdout)
    assert answer["error"]["code"] == "INVALID_REF", answer
    assert "Traceback" not in done.stderr and upstream.requests == []
