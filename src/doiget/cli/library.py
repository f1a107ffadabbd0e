"""``doiget projects``, ``doiget index`` and ``doiget query``: the library from the shell.

``--json`` prints exactly what the matching MCP tool returns (list_projects,
inspect_collection, index_papers, find_chunks / query_hybrid).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    emit_json,
    handles_errors_as,
    run_closing,
    runtime,
    table,
    wants_json,
)
from doiget.contract import plain
from doiget.envelopes import LIBRARY_ENVELOPE
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.library import contracts as c
from doiget.library.projects import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_EMBED_MODEL,
    DEFAULT_MAX_CHARS,
    DEFAULT_PROJECT_ID,
    TOP_K_CEILING,
    Project,
    check_project_id,
    default_collection,
    delete_project,
    projects_from_config,
    save_project,
)
from doiget.surfaces import for_command_line

if TYPE_CHECKING:
    from doiget.library.service import Library

# Errors in the library tools' shape.
handles_errors = handles_errors_as(LIBRARY_ENVELOPE)

T = TypeVar("T")

ProjectId = Annotated[str, typer.Argument(help="Project id, 'namespace/name'.")]

out = console()
projects_app = typer.Typer(
    help="Projects: named passage collections (add, list, inspect, remove).",
    no_args_is_help=True,
)


def _run(ctx: typer.Context, work: Callable[[Library], Awaitable[T]]) -> T:
    from doiget.library.service import Library

    library = Library(runtime(ctx).settings)
    return run_closing(library, work)


@projects_app.command("add")
@handles_errors
def add(
    ctx: typer.Context,
    project_id: ProjectId,
    collection: Annotated[
        str | None, typer.Option(help="Collection name (default proj-<namespace>-<name>).")
    ] = None,
    embed_model: Annotated[str, typer.Option(help="Embedding model.")] = DEFAULT_EMBED_MODEL,
    hybrid: Annotated[
        bool, typer.Option("--hybrid/--no-hybrid", help="Allow query_hybrid.")
    ] = True,
    max_chars: Annotated[
        int, typer.Option(min=200, max=20_000, help="render_text length cap.")
    ] = DEFAULT_MAX_CHARS,
    top_k_max: Annotated[
        int, typer.Option(min=1, max=TOP_K_CEILING, help="Cap on top_k.")
    ] = TOP_K_CEILING,
    chunk_tokens: Annotated[
        int, typer.Option(min=32, max=512, help="Model tokens per chunk.")
    ] = DEFAULT_CHUNK_TOKENS,
    chunk_overlap: Annotated[
        int, typer.Option(min=0, max=256, help="Tokens repeated from the previous chunk.")
    ] = DEFAULT_CHUNK_OVERLAP,
    json_output: JsonFlag = False,
) -> None:
    """Add (or change) a project in config.toml."""
    settings = runtime(ctx).settings
    project = Project(
        id=check_project_id(project_id),
        collection=collection or default_collection(project_id),
        embed_model=embed_model,
        hybrid_enabled=hybrid,
        max_chars_per_chunk=max_chars,
        top_k_max=top_k_max,
        chunk_tokens=chunk_tokens,
        chunk_overlap=chunk_overlap,
    )
    save_project(settings.config_path, project)
    if wants_json(ctx, json_output):
        emit_json({"id": project.id, **project.to_table()})
    else:
        out.print(f"project {project.id} saved in {settings.config_path}")


@projects_app.command("list")
@handles_errors
def list_(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Every configured project."""
    result = _run(ctx, lambda library: library.list_projects())
    if wants_json(ctx, json_output):
        emit_json(plain(result))
        return
    if not result.projects:
        out.print("no projects yet: doiget projects add NAMESPACE/NAME")
        return
    grid = table("project", "collection", "model", "hybrid")
    for row in result.projects:
        grid.add_row(row.id, row.collection, row.embed_model, str(row.hybrid_enabled))
    out.print(grid)


@projects_app.command("inspect")
@handles_errors
def inspect(
    ctx: typer.Context,
    project_id: ProjectId,
    sample: Annotated[int, typer.Option(min=0, max=5, help="Sample payloads to show.")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """A project's collection: size, model, payload keys, indexes, samples."""
    request = cli_build(ctx, c.CollectionQuery, project=project_id, sample=sample)
    result = plain(_run(ctx, lambda library: library.inspect(request)))
    if wants_json(ctx, json_output):
        emit_json(result)
        return
    for key in ("project", "collection", "size", "embed_model", "dimension", "hybrid_enabled"):
        out.print(f"{key}: {result[key]}")
    out.print(f"payload keys: {', '.join(result['payload_keys']) or '-'}")
    for item in result["sample"]:
        out.print(f"- {item['id']} p.{item.get('doc', {}).get('page_span')}: {item['text'][:120]}")


@projects_app.command("remove")
@handles_errors
def remove(
    ctx: typer.Context,
    project_id: ProjectId,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Remove a project from config.toml and delete its indexed passages."""
    settings = runtime(ctx).settings
    projects = projects_from_config(settings.projects_table, str(settings.config_path))
    if project_id not in projects:
        raise DoigetError(
            ErrorCode.INVALID_PROJECT,
            f"no project {quoted(project_id)}; doiget projects list shows them.",
        )
    project = projects[project_id]
    if not yes and not typer.confirm(
        f"Remove project {project_id} and delete collection {project.collection}?"
    ):
        raise typer.Exit(1)

    async def drop(library: Library) -> None:
        await anyio.to_thread.run_sync(library.index.drop_collection, project.collection)

    _run(ctx, drop)
    delete_project(settings.config_path, project_id)
    if wants_json(ctx, json_output):
        emit_json({"removed": project_id, "collection": project.collection})
    else:
        out.print(f"project {project_id} removed; collection {project.collection} deleted")


@handles_errors
def index(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None, typer.Argument(help="Stored refs (DOIs, arXiv ids) or PDF files.")
    ] = None,
    project_id: Annotated[
        str, typer.Option("--project", "-p", help="Project to index into.")
    ] = DEFAULT_PROJECT_ID,
    create: Annotated[
        bool, typer.Option("--create", help="Create the project when it does not exist.")
    ] = False,
    everything: Annotated[
        bool, typer.Option("--all", help="Every stored paper that has a PDF.")
    ] = False,
    force_rebuild: Annotated[
        bool, typer.Option(help="Drop the collection first (after a model change).")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Index stored papers (by ref, or --all) or PDF files into a project."""
    from doiget.library.documents import select
    from doiget.papers.store import Store

    names = refs or []
    if not names and not everything:
        raise DoigetError(ErrorCode.INVALID_REF, "give refs or PDF files to index, or --all")
    settings = runtime(ctx).settings
    files = [Path(name) for name in names if name.lower().endswith(".pdf")]
    selection = select(
        Store(settings.store_root),
        refs=[name for name in names if not name.lower().endswith(".pdf")],
        files=files,
        everything=everything,
    )
    as_json = wants_json(ctx, json_output)
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )

    async def work(library: Library) -> c.IndexReport:
        library.project(project_id, create=create)  # before any work
        with Progress(*columns, console=console(stderr=True), transient=as_json) as bar:
            task = bar.add_task("loading model", total=len(selection.documents))

            async def advance(done: float, total: int, message: str) -> None:
                bar.update(task, completed=done, description=message[:60])

            return await library.index_documents(
                project_id,
                selection.documents,
                advance,
                force_rebuild=force_rebuild,
                unusable=selection.problems,
            )

    result = _run(ctx, work)
    if as_json:
        emit_json(plain(result))
    else:
        grid = table("document", "status", "chunks", "pages", "note")
        for row in result.documents:
            grid.add_row(
                row.doc_id,
                row.status,
                str(row.chunks),
                str(row.pages),
                for_command_line(row.message or ""),
            )
        out.print(grid)
        out.print(
            f"{result.indexed} indexed, {result.skipped} skipped, "
            f"{result.chunks_written} chunks written into {project_id}"
        )
    if result.indexed == 0 and result.skipped:
        raise typer.Exit(1)


def _filters(values: list[str]) -> dict[str, Any]:
    filters: dict[str, list[str]] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key or not wanted:
            raise DoigetError(
                ErrorCode.INVALID_REF, f"--filter takes KEY=VALUE, not {quoted(value)}"
            )
        filters.setdefault(key.strip(), []).append(wanted.strip())
    return dict(filters)


@handles_errors
def query(
    ctx: typer.Context,
    project_id: ProjectId,
    text: Annotated[str, typer.Argument(help="What to look for.")],
    hybrid: Annotated[bool, typer.Option("--hybrid", help="Fuse BM25 with vectors.")] = False,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=20)] = 6,
    filters: Annotated[
        list[str] | None, typer.Option("--filter", help="KEY=VALUE (repeat for more).")
    ] = None,
    full_text: Annotated[bool, typer.Option(help="Print whole chunks.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Search a project's passages (find_chunks, or query_hybrid with --hybrid)."""
    request = cli_build(
        ctx,
        c.ChunkSearch,
        project=project_id,
        query=text,
        top_k=top_k,
        filters=_filters(filters or []),
        full_text=full_text,
    )
    result = _run(ctx, lambda library: library.search(request, hybrid=hybrid))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
        return
    if not result.items:
        out.print("no passages found (is anything indexed? doiget index --project ...)")
    for rank, item in enumerate(result.items, 1):
        pages = item.page_span or []
        where = (
            f"p. {pages[0]}-{pages[1]}"
            if pages and pages[0] != pages[1]
            else (f"p. {pages[0]}" if pages else "")
        )
        out.print(
            Text.assemble(
                (f"{rank}. {item.citekey or item.title or ''}", "bold"),
                f" {where} § {item.section or '-'}  score {item.score:.3f}",
            )
        )
        out.print(item.full_text if full_text else item.render_text)
        out.print()
