"""``doiget read`` and ``doiget quote``: a stored paper's outline and text, and whether
a quotation is in it. With ``--json`` each prints what doiget_read_paper or
doiget_check_quote returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from doiget.cli.output import JsonFlag, emit_json, handles_errors, run_closing, runtime, wants_json
from doiget.contract import build, invalid, plain
from doiget.reading import contracts as c

if TYPE_CHECKING:
    from doiget.reading.service import Reader

T = TypeVar("T")

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _run(ctx: typer.Context, work: Callable[[Reader], Awaitable[T]]) -> T:
    from doiget.reading.service import Reader

    return run_closing(Reader(runtime(ctx).settings), work)


def _show_outline(result: c.PaperReading) -> None:
    out.print(f"[bold]{escape(result.title or result.ref)}[/] ({result.page_count} pages)")
    for section in result.sections or []:
        indent = "  " * (section.level - 1)
        first, last = section.pages or [0, 0]
        span = f"p. {first}" if first == last else f"pp. {first}-{last}"
        out.print(f"{indent}{section.number:<6} {escape(section.title)}  [dim]{span}[/]")
    for caption in (result.figures or []) + (result.tables or []):
        out.print(f"[dim]p. {caption.page}[/] {escape(caption.caption)}")
    out.print(f"{result.references or 0} references")


@handles_errors
def read(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A stored paper: DOI, arXiv id or store key.")],
    section: Annotated[
        str | None, typer.Option("--section", "-s", help="Outline number ('2.1') or title.")
    ] = None,
    pages: Annotated[str | None, typer.Option("--pages", "-p", help="'3' or '3-5'.")] = None,
    max_chars: Annotated[
        int,
        typer.Option(
            "--max-chars",
            min=c.MIN_MAX_CHARS,
            max=c.MAX_MAX_CHARS,
            help="Size of a piece.",
        ),
    ] = c.DEFAULT_MAX_CHARS,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Where the last piece said to go on.")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """A stored paper's outline; with --section or --pages, that text, one piece a call."""
    request = build(
        c.ReadPaper, ref=ref, section=section, pages=pages, max_chars=max_chars, cursor=cursor
    )
    result = _run(ctx, lambda reader: reader.read(request))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    elif result.text is None:
        _show_outline(result)
    else:
        typer.echo(result.text, nl=False)
        where = ", ".join(f"{s.number} {s.title}" for s in result.covers or [])
        err.print(f"[dim]{result.scope}; pages {result.pages}; {escape(where)}[/]")
        if result.cursor:
            err.print(f"[dim]more: add --cursor {result.cursor}[/]")


@handles_errors
def quote(
    ctx: typer.Context,
    words: Annotated[
        list[str],
        typer.Argument(
            metavar="[REF] TEXT",
            help="A stored paper (DOI, arXiv id or store key) and the quotation; the "
            "quotation alone looks in a project's indexed passages.",
        ),
    ],
    project: Annotated[
        str | None,
        typer.Option("--project", help="Project to look in without REF (default doiget/papers)."),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Whether a quotation occurs in a stored paper (or a project), on which page; else
    the closest passage. Exit 0 when found, 1 when not."""
    if len(words) not in (1, 2):
        raise invalid(f"give [REF] TEXT: one or two arguments, not {len(words)}.")
    ref, text = (None, words[0]) if len(words) == 1 else (words[0], words[1])
    request = build(c.CheckQuote, quote=text, ref=ref, project=project)
    result = _run(ctx, lambda reader: reader.check(request))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    else:
        verdict = "[green]found[/]" if result.found else "[red]not found[/]"
        where = f"p. {result.page}" if result.page is not None else f"pp. {result.pages}"
        section = result.section.title if result.section else ""
        source = result.ref or result.doc_id or ""
        out.print(
            f"{verdict} (similarity {result.similarity:.2f}) {escape(source)} {where} "
            f"{escape(section)}"
        )
        if result.passage:
            out.print(f"  {escape(result.passage)}")
    if not result.found:
        raise typer.Exit(1)
