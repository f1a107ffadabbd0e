"""Fixtures the unit tests of the MCP handlers share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from doiget.runtime import Runtime, load_runtime


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A runtime of its own: a store, data folder, log and no configuration file."""
    made = load_runtime({
        "DOIGET_CONFIG": str(tmp_path / "none.toml"),
        "DOIGET_STORE_ROOT": str(tmp_path / "papers"),
        "DOIGET_LOG_PATH": str(tmp_path / "log.jsonl"),
        "DOIGET_DATA_DIR": str(tmp_path / "data"),
    })  # fmt: skip
    yield made
    await made.aclose()
