"""``doiget add``: put local PDFs into the library, identified when the sources agree."""

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
    run_closing,
    runtime,
    wants_json,
)
from doiget.contract import plain

if TYPE_CHECKING:
    from doiget.papers import added as ac
    from doiget.papers.service import Papers

out = console()


@handles_errors
def add(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="PDF files, or folders walked for PDFs.")],
    json_output: JsonFlag = False,
) -> None:
    """Copy PDFs into the library and identify each (metadata, arXiv stamp, DOI on the page,
    else title and authors); one that cannot be identified is stored as local:<sha256>."""
    from doiget.papers import added as ac
    from doiget.papers.adding import PdfAdder
    from doiget.papers.service import Papers
    from doiget.verify.service import Verifier

    as_json = wants_json(ctx, json_output)
    request = cli_build(ctx, ac.AddPdfs, paths=paths)
    shared = runtime(ctx)

    async def work(papers: Papers) -> ac.PdfsAdded:
        adder = PdfAdder(papers, Verifier.of(shared))
        columns = (TextColumn("adding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
            task = bar.add_task("add", total=None)

            def advance(done: int, total: int, row: ac.AddResult) -> None:
                bar.update(task, completed=done, total=total)

            return await adder.add_many(request.paths, progress=advance)

    result = run_closing(Papers(shared), work, shared)
    if as_json:
        emit_json(plain(result))  # the one document doiget_add_pdf returns
    else:
        _show(result)
    if result.summary.failed:
        raise typer.Exit(1)


def _show(result: ac.PdfsAdded) -> None:
    for row in result.results:
        if not row.ok:
            error = row.error
            said = f"{error.code}: {error.message}" if error else "failed"
            out.print(Text.assemble(("failed", "red"), f" {row.path}: {said}"))
        elif row.identified:
            how = f"{row.identified_by}" if row.identified_by else "its entry"
            out.print(
                Text.assemble(
                    (f"{row.status}", "green"),
                    f" {row.path} -> {row.ref} [{row.citekey}] {row.title} (by {how})",
                )
            )
        else:
            out.print(
                Text.assemble(
                    (f"{row.status}", "yellow"),
                    f" {row.path} -> {row.ref}: not identified; read title {row.title!r}",
                )
            )
    summary = result.summary
    out.print(
        f"{summary.total} PDF(s): {summary.identified} identified, "
        f"{summary.unidentified} unidentified, {summary.failed} failed"
    )
