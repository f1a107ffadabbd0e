"""The runtime owns the process's one network: cores use it, the runtime closes it."""

from __future__ import annotations

from pathlib import Path

from doiget.papers.service import Papers
from doiget.runtime import load_runtime
from doiget.scholar.service import Scholar


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "DOIGET_CONFIG": str(tmp_path / "none.toml"),
        "DOIGET_STORE_ROOT": str(tmp_path / "papers"),
        "DOIGET_LOG_PATH": str(tmp_path / "log.jsonl"),
        "DOIGET_DATA_DIR": str(tmp_path / "data"),
    }


async def test_cores_share_the_runtime_network_and_leave_it_open(tmp_path: Path) -> None:
    runtime = load_runtime(_env(tmp_path))
    papers, scholar = Papers(runtime), Scholar(runtime)
    network = runtime.network()
    assert papers.network is scholar.network is network
    client = network.client("crossref")
    await papers.aclose()
    await scholar.aclose()
    assert network.client("crossref") is client  # still open: nothing closed it
    await runtime.aclose()
    assert network.client("crossref") is not client  # closed, its pools dropped
    assert runtime.network() is not network  # a later use builds a fresh one
    await runtime.aclose()
