"""``doiget verify``: check every reference of a bibliography against the record."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    report_error,
    runtime,
    wants_json,
)
from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode

if TYPE_CHECKING:
    from doiget.verify.cited import CitedWork
    from doiget.verify.contracts import Row, Verification

_COLOURS = {"verified": "green", "miscited": "yellow", "not_found": "red", "uncertain": "blue"}


def _read(source: str) -> list[CitedWork]:
    from doiget.verify.inputs import read_path, read_stream_text, read_text

    return read_text(read_stream_text(sys.stdin)) if source == "-" else read_path(Path(source))


def _show(result: Verification) -> None:
    out = console()
    for index, row in enumerate(result.results, 1):
        colour = _COLOURS[row.verdict]
        label = row.key or f"#{index}"
        out.print(Text.assemble((f"{row.verdict:<9}", colour), f" {label} ({row.confidence:.2f})"))
        for problem in row.problems:
            out.print(f"    {problem.kind}: cited {problem.cited!r}, record {problem.actual!r}")
        if row.match is not None and row.match.ref:
            out.print(f"    match: {row.match.ref} {row.match.title}")
        if row.note and row.verdict != "verified":
            out.print(f"    {row.note}")


@handles_errors
def verify(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="A .bib, CSL-JSON .json, .ris or .txt file (one reference per paragraph), "
            "a PDF manuscript (its reference list), or - for stdin."
        ),
    ],
    json_output: JsonFlag = False,
) -> None:
    """Check references against Crossref, DBLP and arXiv (exit 0 even when some are bad)."""
    as_json = wants_json(ctx, json_output)
    try:
        cited = _read(source)
    except DoigetError as failure:
        report_error(failure, as_json)
        raise typer.Exit(1) from None
    if not cited:
        report_error(
            DoigetError(
                ErrorCode.INVALID_REF,
                f"no reference found in {source}; pass BibTeX entries, RIS records, CSL-JSON "
                "items or one free-text reference per paragraph.",
            ),
            as_json,
        )
        raise typer.Exit(1)
    result = _verify(ctx, cited, as_json)
    emit_json(plain(result)) if as_json else _show(result)


def _verify(ctx: typer.Context, cited: list[CitedWork], as_json: bool) -> Verification:
    import anyio

    from doiget.verify.service import Verifier

    shared = runtime(ctx)

    async def work() -> Verification:
        verifier = Verifier.of(shared)
        columns = (TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        try:
            with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
                task = bar.add_task("verify", total=len(cited))

                def advance(done: int, total: int, row: Row) -> None:
                    bar.update(task, completed=done)

                return await verifier.verify_many(cited, advance)
        finally:
            await shared.aclose()

    return anyio.run(work)
