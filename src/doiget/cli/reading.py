"""``doiget read`` and ``doiget quote``: a stored paper's outline and text, and whether
a quotation is in it. With ``--json`` each prints what doiget_read_paper or
doiget_check_quote returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    console,
    echo,
    emit_json,
    handles_errors,
    run_closing,
    runtime,
    wants_json,
)
from doiget.contract import build, invalid, plain
from doiget.reading import contracts as c

if TYPE_CHECKING:
    from doiget.papers.origin import PdfOrigin
    from doiget.reading.service import Reader

T = TypeVar("T")

out = console()
err = console(stderr=True)


def _run(ctx: typer.Context, work: Callable[[Reader], Awaitable[T]]) -> T:
    from doiget.reading.service import Reader

    return run_closing(Reader(runtime(ctx).settings), work)


def _show_outline(result: c.PaperReading) -> None:
    out.print(Text.assemble((result.title or result.ref, "bold"), f" ({result.page_count} pages)"))
    for section in result.sections or []:
        indent = "  " * (section.level - 1)
        first, last = section.pages or [0, 0]
        span = f"p. {first}" if first == last else f"pp. {first}-{last}"
        out.print(Text.assemble(f"{indent}{section.number:<6} {section.title}  ", (span, "dim")))
    for caption in (result.figures or []) + (result.tables or []):
        out.print(Text.assemble((f"p. {caption.page}", "dim"), f" {caption.caption}"))
    out.print(f"{result.references or 0} references")
    _show_origin(result.pdf_origin)


def _show_origin(origin: PdfOrigin | None) -> None:
    if origin is not None:
        err.print(f"text of the PDF {origin.said()}", style="dim")


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
        echo(result.text, nl=False)
        where = ", ".join(f"{s.number} {s.title}" for s in result.covers or [])
        err.print(f"{result.scope}; pages {result.pages}; {where}", style="dim")
        _show_origin(result.pdf_origin)
        if result.cursor:
            err.print(f"more: add --cursor {result.cursor}", style="dim")


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
        verdict = ("found", "green") if result.found else ("not found", "red")
        where = f"p. {result.page}" if result.page is not None else f"pp. {result.pages}"
        section = result.section.title if result.section else ""
        source = result.ref or result.doc_id or ""
        out.print(
            Text.assemble(
                verdict, f" (similarity {result.similarity:.2f}) {source} {where} {section}"
            )
        )
        if result.passage:
            out.print(f"  {result.passage}")
        _show_origin(result.pdf_origin)
    if not result.found:
        raise typer.Exit(1)
