"""The doiget_zotero_sync tool's listing and call: within the description budget, in
the six sections, writing doiget's library (never destructive), and the call's
collection, project and progress passed to the sync."""

from __future__ import annotations

import json
from typing import Any

import anyio

from doiget.server.toolset import SECTIONS
from doiget.server.zotero_sync_tool import zotero_sync_tool
from doiget.zotero.sync_contracts import SyncCounts, ZoteroSyncReport


class _Sync:
    def __init__(self) -> None:
        self.asked: dict[str, Any] = {}

    async def run(self, **asked: Any) -> ZoteroSyncReport:
        self.asked = asked
        await asked["progress"](1, 1, "done")
        return ZoteroSyncReport(
            ok=True, library="users/1", to_version=3, requests=1, counts=SyncCounts(), results=[]
        )


class _Call:
    def __init__(self) -> None:
        self.said: list[tuple[float, int, str]] = []

    async def progress(self, done: float, total: int, message: str) -> None:
        self.said.append((done, total, message))


def test_the_tool_fits_the_budget_and_says_what_it_writes() -> None:
    tool = zotero_sync_tool(lambda: _Sync())  # type: ignore[arg-type,return-value]
    schema = json.dumps(tool.input_schema, separators=(",", ":"), ensure_ascii=False)
    assert len((tool.name + tool.description + schema).encode()) <= 900
    assert [line.split(":")[0] + ":" for line in tool.description.splitlines()] == list(SECTIONS)
    assert "Never writes Zotero" in tool.description
    hints = tool.hints
    assert (hints.read_only, hints.destructive, hints.idempotent) == (False, False, True)


def test_the_call_passes_the_collection_project_and_progress() -> None:
    sync, call = _Sync(), _Call()
    tool = zotero_sync_tool(lambda: sync)  # type: ignore[arg-type,return-value]
    arguments = {"collection": "Reading/Méthodes", "project": "lab/ice"}
    report = anyio.run(tool.call, arguments, call)  # type: ignore[arg-type]
    assert report.to_version == 3
    assert (sync.asked["collection"], sync.asked["project"]) == ("Reading/Méthodes", "lab/ice")
    assert call.said == [(1, 1, "done")]
