"""From the shell: a PDF PDFium cannot read is that file's own coded error and a batch
goes on past it; a PDF bomb is refused within a bound on memory and time, however
much it would inflate to."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from addpdfutil import PNAS, PNAS_AUTHORS, PNAS_TITLE, route_sources

from bombs import pdf_flate_bomb, pdf_nested_forms, pdf_operators_bomb

from cliutil import clean_env, command, doiget
from pdfmaker import broken_pdf, write_paper_pdf
from replay import ReplayUpstream

# Peak memory of any one process of the command (the CLI or its PDF reader), and its
# time: the child reading a PDF stops at 768 MiB; read in the CLI's own process these
# bombs took 1.1 to 2.2 GB.
PEAK_BYTES = 900 * 1024 * 1024
SECONDS = 90.0
# Runs a command, then prints the largest peak RSS (KiB) of the processes it waited for.
_MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=False); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def test_adding_a_folder_goes_on_past_pdfs_pdfium_cannot_read(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    folder = tmp_path / "mine"
    folder.mkdir()
    write_paper_pdf(folder / "a.pdf", PNAS_TITLE, PNAS_AUTHORS, xmp_doi=PNAS)
    broken = ["kids-loop", "parent-loop", "page-is-pages", "truncated"]
    for kind in broken:
        (folder / f"b-{kind}.pdf").write_bytes(broken_pdf(kind))
    write_paper_pdf(folder / "z.pdf", "Untitled Musings on Nothing", ["Ann Other"])
    shown = doiget("--json", "add", str(folder), env=doiget_env)
    document = json.loads(shown.stdout)
    rows = {Path(row["path"]).name: row for row in document["results"]}
    assert rows["a.pdf"]["ref"] == PNAS and rows["z.pdf"]["ok"]  # before and after
    for kind in broken:
        error = rows[f"b-{kind}.pdf"]["error"]
        assert error["code"] == "INVALID_REF" and "not a readable PDF" in error["message"]
    assert document["summary"]["failed"] == len(broken)
    assert "INTERNAL_ERROR" not in shown.stdout + shown.stderr


@pytest.mark.parametrize("kind", ["kids-loop", "truncated"])
def test_verifying_a_pdf_pdfium_cannot_read_is_a_coded_refusal(
    doiget_env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "manuscript.pdf"
    path.write_bytes(broken_pdf(kind))
    shown = doiget("--json", "verify", str(path), env=doiget_env)
    assert shown.returncode != 0
    assert "INVALID_REF" in shown.stdout and "not a readable PDF" in shown.stdout
    assert "INTERNAL_ERROR" not in shown.stdout + shown.stderr


@pytest.mark.parametrize(
    "build",
    [
        lambda: pdf_flate_bomb(1 << 30),
        lambda: pdf_operators_bomb(3_000_000),
        lambda: pdf_nested_forms(24),
    ],
    ids=["flate-1GiB", "operators-3M", "nested-forms"],
)
def test_adding_a_pdf_bomb_is_refused_within_bounded_memory_and_time(
    doiget_env: dict[str, str], tmp_path: Path, build: object
) -> None:
    path = tmp_path / "bomb.pdf"
    path.write_bytes(build())  # type: ignore[operator]
    began = time.perf_counter()
    measured = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command("--json", "add", str(path))],
        env=clean_env(doiget_env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    took = time.perf_counter() - began
    *answer, peak = measured.stdout.strip().splitlines()
    assert int(peak) * 1024 < PEAK_BYTES, f"peak {int(peak) // 1024} MiB"
    assert took < SECONDS, f"{took:.0f} s"
    row = json.loads("\n".join(answer))["results"][0]
    assert row["error"]["code"] == "INVALID_REF" and "to read" in row["error"]["message"]
