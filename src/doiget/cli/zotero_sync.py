"""``doiget zotero sync``: the researcher's Zotero library into doiget's, incrementally.
With ``--json`` it prints what doiget_zotero_sync returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    emit_json,
    handles_errors,
    progress_told,
    runtime,
    wants_json,
)
from doiget.contract import plain
from doiget.library.projects import DEFAULT_PROJECT_ID
from doiget.zotero.sync_contracts import ZoteroSyncReport, ZoteroSyncRequest

if TYPE_CHECKING:
    from doiget.runtime import Runtime

_COLOURS = {
    "new": "green",
    "updated": "green",
    "deleted": "yellow",
    "not_identified": "blue",
    "failed": "red",
}

out = console()


def _sync(shared: Runtime, request: ZoteroSyncRequest, as_json: bool) -> ZoteroSyncReport:
    import anyio

    from doiget.library.service import Library
    from doiget.papers.service import Papers
    from doiget.verify.service import Verifier
    from doiget.zotero.sync import open_sync

    async def work() -> ZoteroSyncReport:
        papers, verifier = Papers(shared), Verifier.of(shared)
        library = Library(shared.settings)
        try:
            sync = open_sync(papers, verifier, library)
            with progress_told("syncing", transient=as_json) as advance:
                return await sync.run(
                    collection=request.collection, project=request.project, progress=advance
                )
        finally:
            await library.aclose()
            await verifier.aclose()
            await papers.aclose()
            await shared.aclose()

    return anyio.run(work)


def _show(report: ZoteroSyncReport) -> None:
    for row in report.results:
        line = Text.assemble((f"{row.status:<15}", _COLOURS[row.status]), f" {row.key}")
        if row.ref:
            line.append(f" -> {row.ref}")
        if row.retracted:
            line.append(" RETRACTED", style="bold red")
        out.print(line)
        if row.title:
            out.print(f"    {row.title}")
        if row.reason:
            out.print(f"    {row.reason}")
    counts = plain(report.counts)
    summary = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
    out.print(
        f"{report.library}: version {report.from_version} -> {report.to_version}, "
        f"{report.requests} request(s) to Zotero; {summary or 'nothing changed'}"
    )
    if report.note:
        out.print(report.note)


@handles_errors
def sync(
    ctx: typer.Context,
    collection: Annotated[
        str | None,
        typer.Option("--collection", help="Only this collection (its name, or a path like 'A/B')."),
    ] = None,
    project: Annotated[
        str, typer.Option("--project", help="The project the PDFs are indexed into.")
    ] = DEFAULT_PROJECT_ID,
    json_output: JsonFlag = False,
) -> None:
    """Bring the Zotero library's items into doiget's library: only what changed since
    the last sync; works checked, with your citation keys, tags and PDFs."""
    as_json = wants_json(ctx, json_output)
    request = cli_build(ctx, ZoteroSyncRequest, {}, collection=collection, project=project)
    report = _sync(runtime(ctx), request, as_json)
    emit_json(plain(report)) if as_json else _show(report)


def register(app: typer.Typer) -> None:
    """Add ``sync`` to the ``doiget zotero`` group ``app``."""
    app.command("sync")(sync)
