"""Every benchmark still runs: each script of benchmarks/ at its ``--smoke`` size (a
few seconds, offline: the replay upstream, bundled fixtures or built data), so a
change that breaks one fails here rather than on the next measurement. A new script
without ``--smoke`` fails too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Programs another benchmark starts, each with the arguments that one gives it: run by
# that benchmark's smoke run, not on their own.
STARTED_BY = {"minimal_server.py": "http_load.py", "loop_profile.py": "http_load.py"}
SCRIPTS = sorted(
    path.name
    for path in BENCHMARKS.glob("*.py")
    if '__name__ == "__main__"' in path.read_text() and path.name not in STARTED_BY
)


def test_the_scripts_are_found_and_each_takes_smoke() -> None:
    assert {"retrieval_quality.py", "reference_check.py", "batch_rate.py"} <= set(SCRIPTS)
    # A script that ignored its arguments would pass below at its full size: each one
    # reads them through smoke.parse_args, which adds --smoke.
    for script in SCRIPTS:
        assert "from smoke import" in (BENCHMARKS / script).read_text(), script
    for helper, runner in STARTED_BY.items():
        assert helper.removesuffix(".py") in (BENCHMARKS / runner).read_text()


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_runs_at_its_smoke_size(script: str, tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DOIGET_")},
        "DOIGET_DATA_DIR": str(tmp_path / "data"),
        "DOIGET_CONFIG": str(tmp_path / "config.toml"),
        "DOIGET_STORE_ROOT": str(tmp_path / "papers"),
        "DOIGET_LOG_PATH": str(tmp_path / "provenance.jsonl"),
        "HF_HUB_OFFLINE": "1",
        "TMPDIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert re.search(r"\d", done.stdout), (done.stdout, done.stderr[-2000:])
