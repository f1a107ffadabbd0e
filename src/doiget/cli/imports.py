"""``doiget import``: a citation manager's export into the library, entry by entry.
With ``--json`` it prints what doiget_import_bibliography returns."""

from __future__ import annotations

import sys
from pathlib import Path
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
from doiget.importing.contracts import ImportBibliography, ImportReport

if TYPE_CHECKING:
    from doiget.runtime import Runtime

# The format a file's name says it holds; any other name is told by its content.
_SUFFIXES = {".bib": "bibtex", ".bibtex": "bibtex", ".json": "csl-json", ".ris": "ris"}
_COLOURS = {
    "imported": "green",
    "already_present": "green",
    "corrected": "yellow",
    "not_found": "red",
    "uncertain": "blue",
    "no_identifier": "blue",
    "unreadable": "red",
}

out = console()


def _text_of(source: str) -> str:
    """The bibliography's text, from a file or stdin ('-'), refused when too long, not
    UTF-8 text or not a regular file."""
    from doiget.verify.inputs import read_file_text, read_stream_text

    return read_stream_text(sys.stdin) if source == "-" else read_file_text(Path(source))


def _import(
    shared: Runtime, request: ImportBibliography, folder: Path, as_json: bool
) -> ImportReport:
    import anyio

    from doiget.importing.service import Importer
    from doiget.papers.service import Papers
    from doiget.verify.service import Verifier

    async def work() -> ImportReport:
        papers, verifier = Papers(shared), Verifier.of(shared)
        try:
            with progress_told("importing", transient=as_json) as advance:
                importer = Importer(papers, verifier)
                return await importer.run(request, folder=folder, progress=advance)
        finally:
            await verifier.aclose()
            await papers.aclose()
            await shared.aclose()

    return anyio.run(work)


def _show(report: ImportReport) -> None:
    for row in report.results:
        label = row.key or "(no key)"
        line = Text.assemble((f"{row.status:<15}", _COLOURS[row.status]), f" {label}")
        if row.ref:
            line.append(f" -> {row.ref}")
        out.print(line)
        if row.title:
            out.print(f"    {row.title}")
        for problem in row.problems or []:
            out.print(f"    {problem.kind}: cited {problem.cited!r}, record {problem.actual!r}")
        if row.note and row.status not in ("imported", "already_present"):
            out.print(f"    {row.note}")
        for pdf in row.pdf or []:
            said = pdf.path if pdf.ok else pdf.message
            out.print(f"    pdf ({pdf.source}): {'ok' if pdf.ok else 'no'} {said or ''}")
    counts = plain(report.counts)
    out.print(", ".join(f"{count} {status}" for status, count in counts.items() if count))


@handles_errors
def import_(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="A .bib, CSL-JSON .json or .ris export (Zotero, Better BibTeX, Mendeley, "
            "JabRef, Paperpile), or - for stdin."
        ),
    ],
    fetch: Annotated[
        bool, typer.Option("--fetch", help="Also fetch the Open Access PDFs of the works.")
    ] = False,
    text_format: Annotated[
        str,
        typer.Option("--format", help="auto, bibtex, csl-json or ris (default: by name)."),
    ] = "auto",
    json_output: JsonFlag = False,
) -> None:
    """Check every entry of a bibliography and store the real works, keeping your keys."""
    as_json = wants_json(ctx, json_output)
    chosen = (
        _SUFFIXES.get(Path(source).suffix.lower(), "auto") if text_format == "auto" else text_format
    )
    request = cli_build(
        ctx, ImportBibliography, {"text": "source", "format": "text_format"},
        text=_text_of(source), format=chosen, fetch=fetch,
    )  # fmt: skip
    folder = Path.cwd() if source == "-" else Path(source).resolve().parent
    report = _import(runtime(ctx), request, folder, as_json)
    emit_json(plain(report)) if as_json else _show(report)
