"""Papers commands: fetch, batch, resolve, metadata, info, search, recent, pdf-path,
bib, csl, cite, ris, graph, delete, reindex, audit-log.

With ``--json`` each command prints one JSON object per line, shaped like the result
of the matching MCP tool; without it, text for people. Failures go to stderr with the
exit status of the error code.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    echo,
    emit_json,
    handles_errors,
    notices_text,
    report_error,
    run_closing,
    runtime,
    table,
    wants_json,
)
from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode
from doiget.papers import contracts as c

if TYPE_CHECKING:  # the papers core (network, store) loads only when a command runs
    from doiget.papers.service import Papers

T = TypeVar("T")

DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Show the plan: no network, no file, no log row.")
]
Limit = Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="At most this many.")]
RefArg = Annotated[str, typer.Argument(help="A DOI or arXiv id.")]
RefsArg = Annotated[list[str], typer.Argument(help="DOIs or arXiv ids of stored papers.")]

out = console()


def _papers(ctx: typer.Context) -> Papers:
    from doiget.papers.service import Papers

    return Papers(runtime(ctx))


def run_papers(ctx: typer.Context, work: Callable[[Papers], Awaitable[T]]) -> T:
    """Run ``work`` with a papers core, closed afterwards."""
    papers = _papers(ctx)
    return run_closing(papers, work, runtime(ctx))


def _sync(ctx: typer.Context, work: Callable[[Papers], T]) -> T:
    papers = _papers(ctx)
    try:
        return work(papers)
    finally:
        papers.index.close()
        papers.log.close()


def _show_result(ctx: typer.Context, json_output: bool, reply: c.PapersReply) -> None:
    result = plain(reply)
    if wants_json(ctx, json_output):
        emit_json(result)
        return
    if result.get("dry_run"):
        out.print_json(data=result)
        return
    if "path" in result and "size_bytes" in result:
        out.print(
            Text.assemble(
                (str(result["ref"]), "bold"),
                f" fetched from {result['source']} -> {result['path']} "
                f"({result['size_bytes']:,} bytes, licence {result['license']})",
            )
        )
        if result.get("integrity"):
            out.print(Text.assemble("integrity: ", notices_text(result["integrity"])))
        return
    metadata = result.get("metadata", {})
    rows = {
        key: "; ".join(map(str, value)) if isinstance(value, list) else str(value)
        for key, value in metadata.items()
        if not isinstance(value, dict)
    }
    # What the entry says beside its metadata, each key once (metadata may hold it too).
    for key in ("source", "license", "oa_url", "oa_status", "pdf_path", "metadata_path"):
        if result.get(key) is not None:
            rows[key] = str(result[key])
    grid = table("key", "value", show_header=False, title=str(result.get("ref", "")))
    for key, value in rows.items():
        grid.add_row(key, value[:500])
    if result.get("integrity"):
        grid.add_row("integrity", notices_text(result["integrity"]))
    out.print(grid)


def _show_listing(ctx: typer.Context, json_output: bool, reply: c.Listing) -> None:
    result = plain(reply)
    if wants_json(ctx, json_output):
        emit_json(result)
        return
    grid = table("ref", "year", "title", "first author", "pdf", "integrity")
    for row in result["results"]:
        authors = row.get("authors") or []
        grid.add_row(
            row["ref"],
            str(row.get("year") or ""),
            (row.get("title") or "")[:80],
            authors[0] if authors else "",
            "yes" if row.get("has_pdf") else "no",
            notices_text(row.get("integrity") or []),
        )
    out.print(grid)
    out.print(f"{result['count']} result(s)")


@handles_errors
def fetch(
    ctx: typer.Context, ref: RefArg, dry_run: DryRun = False, json_output: JsonFlag = False
) -> None:
    """Resolve a ref and download its Open Access PDF into the library."""
    request = cli_build(ctx, c.PaperFetch, ref=ref, dry_run=dry_run)
    _show_result(ctx, json_output, run_papers(ctx, lambda p: p.fetch(request)))


@handles_errors
def metadata(
    ctx: typer.Context, ref: RefArg, dry_run: DryRun = False, json_output: JsonFlag = False
) -> None:
    """Resolve a ref and store its metadata only (never requests a PDF)."""
    request = cli_build(ctx, c.PaperFetch, ref=ref, dry_run=dry_run)
    _show_result(ctx, json_output, run_papers(ctx, lambda p: p.metadata_only(request)))


@handles_errors
def resolve(ctx: typer.Context, ref: RefArg, json_output: JsonFlag = False) -> None:
    """Show authoritative metadata for a ref (writes only a provenance row)."""
    request = cli_build(ctx, c.PaperLookup, ref=ref)
    _show_result(ctx, json_output, run_papers(ctx, lambda p: p.resolve(request)))


# The most bytes of a refs file read: far more than the 100 refs a batch takes fill.
_MAX_REFS_BYTES = 1024 * 1024


def _read_refs(source: str) -> list[str]:
    """The refs of a file (or stdin), one a line: a FIFO or device is refused, never read."""
    from doiget.verify.inputs import read_file, read_stream_text

    if source == "-":
        text = read_stream_text(sys.stdin)
    else:
        data = read_file(Path(source), _MAX_REFS_BYTES, "a file of refs, one a line")
        text = data.decode("utf-8", "replace")  # an undecodable line is an invalid ref
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


@handles_errors
def batch(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="File with one ref per line, or - for stdin.")],
    dry_run: DryRun = False,
    json_output: JsonFlag = False,
) -> None:
    """Fetch up to 100 refs (one per line) under the rate limits, with a progress bar."""
    try:
        refs = _read_refs(source)
    except OSError as exc:
        raise DoigetError(ErrorCode.INVALID_REF, f"cannot read {source}: {exc}") from exc
    as_json = wants_json(ctx, json_output)
    request = cli_build(ctx, c.BatchFetch, refs=refs, dry_run=dry_run)
    if dry_run:
        plans = plain(run_papers(ctx, lambda p: p.batch(request)))
        emit_json(plans) if as_json else out.print_json(data=plans)
        return

    async def work(papers: Papers) -> c.BatchFetched | c.BatchPlans:
        papers.read_batch(refs)
        columns = (TextColumn("fetching"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
            task = bar.add_task("batch", total=len(refs))

            def advance(done: int, total: int, row: c.BatchRow) -> None:
                bar.update(task, completed=done)

            return await papers.batch(request, progress=advance)

    result = plain(run_papers(ctx, work))
    if as_json:
        emit_json(result)  # the one document doiget_batch_fetch returns
    else:
        for row in result["results"]:
            if row["ok"]:
                out.print(Text.assemble(("ok", "green"), f"     {row['ref']} -> {row['path']}"))
                if row.get("integrity"):
                    out.print(Text.assemble("       ", notices_text(row["integrity"])))
            else:
                out.print(
                    Text.assemble(
                        ("failed", "red"),
                        f" {row['ref']}: {row['error']['code']}: {row['error']['message']}",
                    )
                )
        summary = result["summary"]
        out.print(f"{summary['ok']} of {summary['total']} fetched")
    if result["summary"]["failed"]:
        raise typer.Exit(1)


@handles_errors
def info(ctx: typer.Context, ref: RefArg, json_output: JsonFlag = False) -> None:
    """Show a stored entry's metadata."""
    request = cli_build(ctx, c.PaperLookup, ref=ref)
    _show_result(ctx, json_output, _sync(ctx, lambda p: p.info(request)))


@handles_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words from title, authors, venue, abstract, year.")],
    limit: Limit = 20,
    json_output: JsonFlag = False,
) -> None:
    """Search the local library."""
    request = cli_build(ctx, c.LocalSearch, query=query, limit=limit)
    _show_listing(ctx, json_output, _sync(ctx, lambda p: p.search(request)))


@handles_errors
def recent(ctx: typer.Context, limit: Limit = 20, json_output: JsonFlag = False) -> None:
    """List the most recently fetched entries."""
    request = cli_build(ctx, c.RecentPapers, limit=limit)
    _show_listing(ctx, json_output, _sync(ctx, lambda p: p.recent(request)))


@handles_errors
def pdf_path(ctx: typer.Context, ref: RefArg, json_output: JsonFlag = False) -> None:
    """Print the local path of a stored PDF."""
    request = cli_build(ctx, c.PaperLookup, ref=ref)
    result = _sync(ctx, lambda p: p.pdf_path(request))
    emit_json(plain(result)) if wants_json(ctx, json_output) else echo(result.path)


@handles_errors
def bib(ctx: typer.Context, refs: RefsArg, json_output: JsonFlag = False) -> None:
    """BibTeX for stored entries."""
    request = cli_build(ctx, c.PaperExport, refs=refs)
    result = _sync(ctx, lambda p: p.bibtex(request))
    emit_json(plain(result)) if wants_json(ctx, json_output) else echo(result.bibtex)


@handles_errors
def csl(ctx: typer.Context, refs: RefsArg, json_output: JsonFlag = False) -> None:
    """CSL-JSON for stored entries."""
    request = cli_build(ctx, c.PaperExport, refs=refs)
    result = _sync(ctx, lambda p: p.csl(request))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    else:
        out.print_json(data=result.items)


@handles_errors
def cite(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None, typer.Argument(help="DOIs or arXiv ids of stored papers.")
    ] = None,
    style: Annotated[
        str, typer.Option(help="A CSL style id (see --styles), or bibtex, csl-json, ris.")
    ] = "apa",
    locale: Annotated[
        str | None, typer.Option(help="e.g. en-GB; default: the style's, else en-US.")
    ] = None,
    text_format: Annotated[str, typer.Option("--format", help="text, html or markdown.")] = "text",
    styles: Annotated[bool, typer.Option("--styles", help="List the style ids.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Formatted references (entries and in-text citations) for stored entries."""
    if styles:
        from doiget.cite.styles import style_ids

        listed = c.StyleList(ok=True, count=len(style_ids()), styles=list(style_ids()))
        if wants_json(ctx, json_output):
            emit_json(plain(listed))
        else:
            echo("\n".join(listed.styles))
        return
    request = cli_build(
        ctx,
        c.FormatReferences,
        {"format": "text_format"},
        refs=refs or [],
        style=style,
        locale=locale,
        format=text_format,
    )
    result = _sync(ctx, lambda p: p.format_references(request))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    elif result.items is not None:
        out.print_json(data=result.items)
    elif result.references is None:
        echo(result.text)
    else:
        echo(result.text)
        echo(f"\nIn-text: {result.citation}")


@handles_errors
def ris(ctx: typer.Context, refs: RefsArg, json_output: JsonFlag = False) -> None:
    """RIS for stored entries."""
    request = cli_build(ctx, c.PaperExport, refs=refs)
    result = _sync(ctx, lambda p: p.ris(request))
    emit_json(plain(result)) if wants_json(ctx, json_output) else echo(result.ris)


@handles_errors
def graph(
    ctx: typer.Context,
    ref: RefArg,
    depth: Annotated[int, typer.Option(min=1, max=3, help="BFS depth (1-3).")] = 1,
    direction: Annotated[str, typer.Option(help="references, citations or both.")] = "references",
    json_output: JsonFlag = False,
) -> None:
    """Expand the citation graph around a DOI through OpenAlex (needs DOIGET_ENABLE_OPENALEX)."""
    request = cli_build(ctx, c.CitationGraph, ref=ref, depth=depth, direction=direction)
    result = run_papers(ctx, lambda p: p.graph(request))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
        return
    nodes, edges = result.nodes or [], result.edges or []
    grid = table("depth", "openalex", "year", "title", "doi")
    for node in nodes:
        grid.add_row(
            str(node.depth),
            node.id,
            str(node.year or ""),
            (node.title or "")[:70],
            node.doi or "",
        )
    out.print(grid)
    note = " (truncated by the caps)" if result.truncated else ""
    out.print(f"{len(nodes)} works, {len(edges)} edges{note}")


@handles_errors
def delete(
    ctx: typer.Context,
    ref: RefArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Delete a stored entry (PDF, metadata, index row). The only destructive command."""
    if not yes and not typer.confirm(f"Delete {ref} from the library?", err=True):
        raise typer.Exit(1)
    request = cli_build(ctx, c.StoredRef, ref=ref)
    result = _sync(ctx, lambda p: p.delete(request))
    emit_json(plain(result)) if wants_json(ctx, json_output) else out.print(f"deleted {result.ref}")


@handles_errors
def reindex(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Rebuild the search index from the metadata files."""
    result = _sync(ctx, lambda p: p.reindex())
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    else:
        out.print(f"indexed {result.total} entries")


@handles_errors
def audit_log(
    ctx: typer.Context,
    verify: Annotated[
        bool, typer.Option("--verify", help="Check the hash chain (what the command does).")
    ] = True,
    json_output: JsonFlag = False,
) -> None:
    """Verify the provenance log: its hash chain, and that it reaches the row its signed
    head records. Exit 0 when intact, 4 with what is broken or missing."""
    from dataclasses import asdict

    from doiget.papers.provenance import verify as verify_log

    del verify  # checking is all the command does; --verify stays accepted
    settings = runtime(ctx).settings
    report = verify_log(settings.log_path, settings.provenance_key_path)
    payload: dict[str, Any] = {"ok": report.ok, **asdict(report)}
    error = None
    if not report.ok:
        error = DoigetError(
            ErrorCode.LOG_ERROR, f"the provenance log does not verify: {report.reason}"
        )
        payload["error"] = error.to_dict()
    if wants_json(ctx, json_output):
        emit_json(payload)  # one document, the failure included
    else:
        if report.ok:
            anchored = "signed head matches" if report.anchored else "no signed head yet"
            out.print(f"provenance log verified: {report.rows} rows, chain intact, {anchored}")
        else:
            where = f" (file {report.file}, line {report.line})" if report.line else ""
            out.print(f"broken at row {report.first_broken}{where}: {report.reason}", markup=False)
        for note in report.notes:
            out.print(f"note: {note}", markup=False)
        if error is not None:
            report_error(error, False)
    if error is not None:
        raise typer.Exit(error.exit_status)


COMMANDS: dict[str, Callable[..., None]] = {
    "fetch": fetch,
    "batch": batch,
    "resolve": resolve,
    "metadata": metadata,
    "info": info,
    "search": search,
    "recent": recent,
    "pdf-path": pdf_path,
    "bib": bib,
    "csl": csl,
    "cite": cite,
    "ris": ris,
    "graph": graph,
    "delete": delete,
    "reindex": reindex,
    "audit-log": audit_log,
}
