"""``doiget zotero``: the researcher's Zotero library from the command line.

``search``, ``show KEY``, ``add REF``, ``note KEY TEXT`` and ``tag KEY TAG...``. A
write under ``DOIGET_ZOTERO_WRITE=ask`` is asked on the terminal (stderr) unless
``--yes``; ``--json`` prints what the matching MCP tool returns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    emit_json,
    handles_errors,
    run_closing,
    runtime,
    table,
    wants_json,
)
from doiget.cli.zotero_sync import register as register_sync
from doiget.contract import plain
from doiget.zotero.contracts import Written, ZoteroAdd, ZoteroFound, ZoteroSearch

if TYPE_CHECKING:
    from doiget.zotero.service import ZoteroCore

R = TypeVar("R")
Yes = Annotated[
    bool, typer.Option("--yes", "-y", help="Approve the write without asking (writes: ask).")
]
Tags = Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).")]

out = console()
zotero_app = typer.Typer(
    help="Search your Zotero library; add verified works, notes and tags to it.",
    no_args_is_help=True,
)
register_sync(zotero_app)


def _run(ctx: typer.Context, work: Callable[[ZoteroCore], Awaitable[R]]) -> R:
    from doiget.zotero.service import ZoteroCore

    shared = runtime(ctx)
    return run_closing(ZoteroCore(shared), work, shared)


def _asker(yes: bool) -> Callable[[str, Mapping[str, Any]], Awaitable[bool | None]]:
    """The terminal's approval: ``--yes``, or the person's answer on stdin (the question
    goes to stderr, so ``--json`` output stays JSON)."""

    async def confirm(message: str, details: Mapping[str, Any]) -> bool | None:
        if yes:
            return True
        import click

        err = console(stderr=True)
        err.print(message, markup=False, highlight=False, soft_wrap=True)
        for name, value in details.items():
            if value not in (None, "", []):
                err.print(f"  {name}: {value}", markup=False, highlight=False, soft_wrap=True)
        try:
            return click.confirm("Write this to Zotero?", default=False, err=True)
        except click.Abort:  # no answer (stdin closed): nothing is approved
            return False

    return confirm


def _show_found(found: ZoteroFound) -> None:
    if found.collections is not None:
        grid = table("key", "collection", "parent", title=f"collections of {found.library}")
        for collection in found.collections:
            grid.add_row(collection.key, collection.name, collection.parent or "")
        out.print(grid)
        return
    for item in found.items or []:
        creators = "; ".join((item.creators or [])[:3])
        out.print(f"{item.key}  {item.item_type}  {item.title or ''}", markup=False)
        out.print(f"    {creators} {item.date or ''} {item.doi or ''}".rstrip(), markup=False)
        if item.citation_key:
            out.print(f"    citation key: {item.citation_key}", markup=False)
        for note in item.notes or []:
            out.print(f"    note {note.key}: {note.text[:200]}", markup=False)
        for attachment in item.attachments or []:
            where = attachment.path or attachment.missing or ""
            out.print(f"    attachment {attachment.key}: {attachment.title} {where}", markup=False)
            for mark in attachment.annotations or []:
                said = mark.text or mark.comment or ""
                out.print(
                    f"      p. {mark.page_label} {mark.type} {mark.color}: {said}", markup=False
                )
    if found.total is not None and found.items is not None and found.total > len(found.items):
        out.print(f"{len(found.items)} of {found.total}; --start for more")


def _show_written(written: Written) -> None:
    if written.created is False:
        out.print(f"already in {written.library}: {written.key}", markup=False)
    else:
        out.print(f"written to {written.library}: {written.key or '(saved)'}", markup=False)
    for name in ("collection", "attachment", "note"):
        value = getattr(written, name)
        if value:
            out.print(f"    {name}: {value}", markup=False)
    if written.tags_added:
        out.print(f"    tags added: {', '.join(written.tags_added)}", markup=False)
    for skipped in written.skipped or []:
        out.print(f"    not done: {skipped}", markup=False)


def _searched(ctx: typer.Context, request: ZoteroSearch, as_json: bool) -> None:
    found = _run(ctx, lambda core: core.search(request))
    emit_json(plain(found)) if as_json else _show_found(found)


def _added(ctx: typer.Context, request: ZoteroAdd, yes: bool, as_json: bool) -> None:
    written = _run(ctx, lambda core: core.add(request, _asker(yes)))
    emit_json(plain(written)) if as_json else _show_written(written)


@zotero_app.command("search")
@handles_errors
def search(
    ctx: typer.Context,
    q: Annotated[str | None, typer.Argument(help="Quick search (titles, creators, year).")] = None,
    tags: Tags = None,
    collection: Annotated[str | None, typer.Option(help="A collection's name or key.")] = None,
    item_type: Annotated[
        str | None, typer.Option("--type", help="An item type, e.g. journalArticle.")
    ] = None,
    year: Annotated[int | None, typer.Option(help="Items of this year.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many items.")] = 25,
    start: Annotated[int, typer.Option(min=0, help="Skip this many items.")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """Search the library; with nothing to search for, list its collections."""
    request = cli_build(
        ctx, ZoteroSearch, q=q, tags=tags or [], collection=collection, item_type=item_type,
        year=year, limit=limit, start=start,
    )  # fmt: skip
    _searched(ctx, request, wants_json(ctx, json_output))


@zotero_app.command("show")
@handles_errors
def show(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The item's key, e.g. ABCD2345.")],
    json_output: JsonFlag = False,
) -> None:
    """One item with its notes, attachments and annotations."""
    _searched(ctx, cli_build(ctx, ZoteroSearch, key=key), wants_json(ctx, json_output))


@zotero_app.command("add")
@handles_errors
def add(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A DOI, arXiv id, stored ref, or a reference's text.")],
    collection: Annotated[
        str | None, typer.Option(help="The collection (made when absent).")
    ] = None,
    note: Annotated[
        str | None, typer.Option(help="A note; lines starting with '>' are quotes.")
    ] = None,
    tags: Tags = None,
    take_correction: Annotated[
        bool, typer.Option("--take-correction", help="Add a miscited work as its record has it.")
    ] = False,
    yes: Yes = False,
    json_output: JsonFlag = False,
) -> None:
    """Add a verified work, with its Open Access PDF, to your Zotero library."""
    request = cli_build(
        ctx, ZoteroAdd, {"target": "ref"}, action="work", target=ref, collection=collection,
        note=note, tags=tags or [], take_correction=take_correction,
    )  # fmt: skip
    _added(ctx, request, yes, wants_json(ctx, json_output))


@zotero_app.command("note")
@handles_errors
def note(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The item's key.")],
    text: Annotated[str, typer.Argument(help="The note; lines starting with '>' are quotes.")],
    yes: Yes = False,
    json_output: JsonFlag = False,
) -> None:
    """Add a note to an item."""
    request = cli_build(ctx, ZoteroAdd, {"target": "key", "note": "text"},
                        action="note", target=key, note=text)  # fmt: skip
    _added(ctx, request, yes, wants_json(ctx, json_output))


@zotero_app.command("tag")
@handles_errors
def tag(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The item's key.")],
    tags: Annotated[list[str], typer.Argument(help="Tags to add (its own are kept).")],
    yes: Yes = False,
    json_output: JsonFlag = False,
) -> None:
    """Add tags to an item."""
    request = cli_build(ctx, ZoteroAdd, {"target": "key"}, action="tags", target=key, tags=tags)
    _added(ctx, request, yes, wants_json(ctx, json_output))
