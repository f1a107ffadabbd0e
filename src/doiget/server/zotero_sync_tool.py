"""doiget_zotero_sync: the researcher's Zotero library into doiget's, incrementally.

The tool writes doiget's library only, never Zotero; the ``zotero`` toolset serves it
when a Zotero library is configured, with the sync it builds on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from doiget.server.toolset import Hints, ServedTool, Tool, ToolCall, describe
from doiget.zotero.sync_contracts import ZoteroSyncReport, ZoteroSyncRequest

if TYPE_CHECKING:
    from doiget.zotero.sync import ZoteroSync

NAME = "doiget_zotero_sync"
# Stores works and PDFs in doiget's library (never Zotero's); a second run of an
# unchanged library writes nothing.
SYNCS: Hints = Hints(read_only=False, destructive=False, idempotent=True, open_world=True)

DESCRIPTION = describe(
    when="Bring the researcher's Zotero items into doiget's library.",
    inputs="collection (default: all); project (passage index).",
    outputs="counts; results[]: key, status, ref, citekey, retracted, reason; "
    "interrupted, not_done.",
    costs="Unchanged library: 1 request; else 1 per 50 changed items plus checks.",
    side_effects="Stores works (Zotero and citation keys, tags) and PDFs. Never writes "
    "Zotero; a deleted item only loses its key.",
    limits="Items not identified and without a PDF are not stored; failed ones retry next run.",
)


def zotero_sync_tool(sync: Callable[[], ZoteroSync]) -> ServedTool:
    """The MCP tool running ``sync()`` (the toolset's sync, built when first needed)
    with the call's progress."""

    async def run(request: ZoteroSyncRequest, call: ToolCall) -> ZoteroSyncReport:
        return await sync().run(
            collection=request.collection, project=request.project, progress=call.progress
        )

    return Tool(NAME, DESCRIPTION, ZoteroSyncRequest, ZoteroSyncReport, SYNCS, run)
