"""``doiget integrity``: the retractions, concerns and corrections of stored papers, and
``--check`` to ask Crossref again for notices that came after a paper was stored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    emit_json,
    handles_errors,
    notices_text,
    wants_json,
)
from doiget.cli.papers import run_papers
from doiget.contract import plain
from doiget.papers import contracts as c

if TYPE_CHECKING:
    from doiget.papers.service import Papers

out = console()


@handles_errors
def integrity(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(help="DOIs or arXiv ids of stored papers (default: all of them)."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Ask Crossref again (rate-limited) and record notices that came later.",
        ),
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Retractions, expressions of concern and corrections of stored papers."""
    as_json = wants_json(ctx, json_output)
    request = cli_build(ctx, c.IntegrityCheck, refs=refs or [], check=check)

    async def work(papers: Papers) -> c.IntegrityReport:
        if not check:
            return await papers.check_integrity(request)
        columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
            task = bar.add_task("integrity", total=None)

            def advance(done: int, total: int, row: c.IntegrityRow) -> None:
                bar.update(task, completed=done, total=total)

            return await papers.check_integrity(request, advance)

    result = plain(run_papers(ctx, work))
    if as_json:
        emit_json(result)
        return
    for row in result["results"]:
        if row["status"] in ("new_notices", "recorded"):
            label = "new" if row["status"] == "new_notices" else "   "
            shown = row.get("new") or row.get("integrity") or []
            out.print(Text.assemble((label, "bold"), f" {row['ref']}: ", notices_text(shown)))
        elif row["status"] == "failed":
            error = row["error"]
            out.print(Text.assemble(("failed", "red"), f" {row['ref']}: {error['message']}"))
    if check:
        out.print(
            f"{result['checked']} checked, {result['changed']} with new notices, "
            f"{result['not_checked']} without a Crossref DOI, {result['failed']} failed"
        )
    else:
        out.print(f"{len(result['results'])} stored paper(s) with notices")
    if result["failed"]:
        raise typer.Exit(1)
