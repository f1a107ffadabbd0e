"""``doiget audit``: every citation of a draft checked against the work it cites.

Exits 0 whatever the citations' state (as ``doiget verify`` does) and non-zero, with a
coded error, when the draft cannot be read. Ctrl-C stops the audit: what was checked is
still printed and written, and the citations left say they were not checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    runtime,
    wants_json,
)
from doiget.contract import invalid, plain

if TYPE_CHECKING:
    from doiget.claims.audit import Audit
    from doiget.claims.audit_contracts import AuditReport
    from doiget.claims.manuscripts.model import Manuscript

INTERRUPTED = 130  # the shell's status of a command stopped by Ctrl-C
_COLOURS = {"ok": "green", "partly": "yellow", "unchecked": "blue", "miscited": "yellow"}


@handles_errors
def audit(
    ctx: typer.Context,
    draft: Annotated[
        Path, typer.Argument(help="The draft: .tex, .md, .docx, .pdf or .txt.", show_default=False)
    ],
    bib: Annotated[
        Path | None,
        typer.Option("--bib", help="Its bibliography (.bib, CSL-JSON, RIS), if not named in it."),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="latex, markdown, docx, pdf or text (default: by suffix)."),
    ] = None,
    json_output: JsonFlag = False,
    md: Annotated[Path | None, typer.Option("--md", help="Write the report as Markdown.")] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write the report as one HTML page.")
    ] = None,
    fetch: Annotated[
        bool,
        typer.Option(
            "--fetch/--no-fetch", help="Fetch cited works' Open Access PDFs into the library."
        ),
    ] = True,
) -> None:
    """Check every citation of a draft: is the work real, and does it say what the
    sentence claims? (exit 0 even when some are not)"""
    from doiget.claims.audit_contracts import DraftFormat
    from doiget.claims.manuscripts import read_manuscript

    as_json = wants_json(ctx, json_output)
    formats = get_args(DraftFormat)
    if fmt is not None and fmt not in formats:
        raise invalid(
            f"--format {fmt!r} is not one doiget reads; give one of {', '.join(formats)}."
        )
    manuscript: Manuscript = read_manuscript(draft, bib=bib, fmt=fmt)
    report, interrupted = _audit(ctx, manuscript, fetch, as_json)
    _write(md, html, report)
    if as_json:
        emit_json(plain(report))
    else:
        _show(report)
    if interrupted:
        raise typer.Exit(INTERRUPTED)


def _audit(
    ctx: typer.Context, manuscript: Manuscript, fetch: bool, as_json: bool
) -> tuple[AuditReport, bool]:
    """The report, and whether Ctrl-C cut the audit short."""
    import anyio

    from doiget.claims.audit import Audit, claim_checker
    from doiget.reading.service import Reader
    from doiget.verify.service import Verifier

    shared = runtime(ctx)
    started: list[Audit] = []

    async def work() -> AuditReport:
        reader = Reader(shared.settings)
        verifier = Verifier.of(shared)
        run = Audit(
            manuscript,
            checker=claim_checker(shared, verifier, reader.pool.run),
            verifier=verifier,
            quotes=reader,
            fetch=fetch,
        )
        started.append(run)
        columns = (TextColumn("auditing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        try:
            with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
                task = bar.add_task("audit", total=None)

                def advance(done: int, total: int, message: str) -> None:
                    bar.update(task, completed=done, total=total)

                return await run.run(advance)
        finally:
            await reader.aclose()
            await shared.aclose()

    try:
        return anyio.run(work), False
    except KeyboardInterrupt:
        if not started:
            raise
        return started[0].report(stopped="interrupted (Ctrl-C)"), True


def _write(md: Path | None, html: Path | None, report: AuditReport) -> None:
    from doiget.atomicfile import write_atomic
    from doiget.claims.report.markdown import as_markdown
    from doiget.claims.report.page import as_html

    for path, render in ((md, as_markdown), (html, as_html)):
        if path is None:
            continue
        try:
            write_atomic(path, render(report).encode())
        except OSError as exc:
            raise invalid(
                f"cannot write the report to {path}: {exc.strerror or exc}; name a file in a "
                "folder you can write to."
            ) from None


def _show(report: AuditReport) -> None:
    from doiget.claims.report import LABELS, counts, worst_first

    out = console()
    summary = ", ".join(
        f"{number} {label}" for label, number, _ in counts(report.summary) if number
    )
    out.print(Text(f"{report.name}: {summary or 'no citations'}", style="bold"))
    if report.stopped:
        out.print(Text(f"partial: {report.stopped}", style="yellow"))
    for citation in worst_first(report):
        colour = _COLOURS.get(citation.status, "red")
        keys = ", ".join(check.key for check in citation.keys)
        out.print(
            Text.assemble(
                (f"{LABELS[citation.status]:<24}", colour), f" {citation.place.shown()} [{keys}]"
            )
        )
