"""How the CLI speaks: JSON or rich text on stdout, errors on stderr, exit codes.

Human output carries text from outside (a PDF's title and body, its file name, an
upstream's metadata), so everything it prints goes through :func:`console` or
:func:`echo`, which show control characters as escapes (:func:`doiget.controls.visible`):
a PDF cannot clear the screen, write the clipboard or plant links. ``--json`` prints
exact JSON.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio
import typer
from pydantic import BaseModel
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from doiget.contract import Closable, RequestT, build
from doiget.controls import visible
from doiget.envelopes import PAPERS_ENVELOPE, Envelope
from doiget.errors import DoigetError, ErrorCode
from doiget.redaction import redact_known
from doiget.runtime import Runtime, load_runtime, start_logging
from doiget.surfaces import for_command_line

P = ParamSpec("P")
R = TypeVar("R")
CoreT = TypeVar("CoreT", bound=Closable)

JSON_OPTION_HELP = "Print machine-readable JSON instead of text."
JsonFlag = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]


@dataclass
class CliState:
    """Options given before the command, and the runtime once it is loaded."""

    json: bool = False
    runtime: Runtime | None = None
    # Start the MCP server (stdio, HTTP); given by the program's entry point, which
    # sees both faces.
    serve: Callable[[Runtime], Awaitable[None]] | None = None
    serve_http: Callable[[Runtime], None] | None = None
    # The command's request fields (by wire name) and the options that gave them, so
    # an error about a field names the option instead.
    options: dict[str, str] = field(default_factory=dict)
    # -v: say more on stderr (the capability banner first).
    verbose: bool = False


def state(ctx: Any) -> CliState:
    """The CLI state stored on the root context (typer's or its click's Context)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def wants_json(ctx: typer.Context, local_flag: bool) -> bool:
    """``--json`` given globally or on the command itself."""
    return local_flag or state(ctx).json


def runtime(
    ctx: typer.Context,
    overrides: Mapping[str, str] | None = None,
    *,
    serving: bool = False,
    http: bool = False,
) -> Runtime:
    """Load settings and profile once and configure logging; the capability banner goes
    to stderr for a server (``serving``; ``http`` over HTTP) and, for any other
    command, with ``-v``.

    ``overrides`` are command-line options that stand in for their environment variable.
    """
    cli = state(ctx)
    if cli.runtime is None:
        cli.runtime = load_runtime({**os.environ, **overrides} if overrides else None, http=http)
        start_logging(cli.runtime, banner=serving or cli.verbose)
    return cli.runtime


def _option_name(param: Any) -> str:
    """How a person names a command parameter: its long option, or an argument's name."""
    if param.param_type_name == "option":
        return str(max(param.opts, key=len))
    return str(getattr(param, "metavar", None) or param.name).upper()


def cli_build(
    ctx: typer.Context,
    model: type[RequestT],
    said_as: Mapping[str, str] | None = None,
    /,
    **values: Any,
) -> RequestT:
    """``model`` from the current command's values, as :func:`doiget.contract.build`,
    remembering which option gave each field so an error names it (``--sort``, not
    ``sortBy``).

    A field is matched to the parameter of its own name, else to the one parameter
    holding that very value; ``said_as`` names the rest (field -> parameter).
    """
    params = {param.name: param for param in ctx.command.params if param.name}
    options = state(ctx).options
    for name, value in values.items():
        source = (said_as or {}).get(name) or (name if name in params else None)
        if source is None:
            holders = [key for key, held in ctx.params.items() if held is value]
            source = holders[0] if len(holders) == 1 else None
        if source in params:
            options[_wire_name(model, name)] = _option_name(params[source])
    return build(model, **values)


def _wire_name(model: type[BaseModel], name: str) -> str:
    info = model.model_fields.get(name)
    return (info.alias or name) if info is not None else name


def _said_here(error: DoigetError, options: Mapping[str, str]) -> DoigetError:
    """``error`` with the input at fault named as this command's option."""
    if error.field is None:
        return error
    head, _, rest = error.field.partition(".")
    option = options.get(head)
    if option is None or error.field not in error.message:
        return error
    said = f"{option} {rest}" if rest else option
    return DoigetError(
        error.code,
        error.message.replace(error.field, said, 1),
        error.denial,
        retry_after=error.retry_after,
        details=error.details,
        field=error.field,
    )


class _Terminal(Console):
    """A console whose text shows its control characters escaped; the escape codes of
    its own styles, made after the text is, are untouched."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(visible(segment.text), segment.style)
            for segment in buffer
        )


def console(*, stderr: bool = False) -> Console:
    """The command line's console. Markup is off: a ref, a page's title or an install
    hint such as ``'.[browser]'`` is printed as it is, never read as rich markup;
    styles are given as ``style=`` or :class:`rich.text.Text` spans. Control
    characters are shown escaped."""
    return _Terminal(stderr=stderr, markup=False, highlight=False)


# (done, total, what just happened) told to a progress bar.
Advance = Callable[[int, int, str], None]


@contextmanager
def progress_told(label: str, *, transient: bool) -> Iterator[Advance]:
    """A progress bar on stderr that shows what just happened as its description (as it
    is, never read as markup: it holds titles and references); ``transient`` clears it
    when done (when stdout carries JSON)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}", markup=False), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())  # fmt: skip
    with Progress(*columns, console=console(stderr=True), transient=transient) as bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int, message: str) -> None:
            bar.update(task, completed=done, total=total, description=message[:60])

        yield advance


def echo(text: str | None, *, err: bool = False, nl: bool = True) -> None:
    """``text`` as it is, but for its control characters, shown escaped."""
    typer.echo(visible(text or ""), err=err, nl=nl)


def table(*headers: str, show_header: bool = True, title: str | None = None) -> Table:
    """A table whose cells wrap, and fold a word too long for its column (a ref, a
    variable name), so nothing is cut at 80 columns."""
    grid = Table(show_header=show_header, title=title)
    for header in headers:
        grid.add_column(header, overflow="fold")
    return grid


def emit_json(payload: Any) -> None:
    """One JSON object on one line of stdout (the shape of the matching MCP tool result)."""
    typer.echo(redact_known(json.dumps(payload, ensure_ascii=False)))


def report_error(
    error: DoigetError,
    as_json: bool,
    envelope: Envelope = PAPERS_ENVELOPE,
    ref: str | None = None,
    ctx: Any = None,
) -> None:
    """An error: with ``--json``, on stdout, the JSON the matching MCP tool returns
    for it (its fields by their wire names, as a script reading the tool's document
    expects); else one readable line on stderr, with the toolset's own code and an
    input at fault named as this command's option. Either way a tool named as the next
    step is named as its command."""
    if as_json:
        typer.echo(redact_known(for_command_line(envelope.failure(error, ref).text)))
    else:
        if hasattr(ctx, "find_root"):
            error = _said_here(error, state(ctx).options)
        line = f"doiget: {envelope.line(error)}"
        echo(redact_known(for_command_line(line)), err=True)


def handles_errors_as(envelope: Envelope) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for the commands of one toolset: a DoigetError becomes its exit
    status and is reported in that toolset's shape; anything unexpected becomes
    INTERNAL_ERROR."""

    def decorate(command: Callable[P, R]) -> Callable[P, R]:
        return _handling_errors(command, envelope)

    return decorate


def _handling_errors(command: Callable[P, R], envelope: Envelope) -> Callable[P, R]:
    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        # Every command takes the context as ``ctx``; typer passes parameters by name.
        ctx = kwargs.get("ctx")
        as_json = bool(kwargs.get("json_output")) or (hasattr(ctx, "find_root") and state(ctx).json)
        ref = kwargs.get("ref")
        shown_ref = ref if isinstance(ref, str) else None
        try:
            return command(*args, **kwargs)
        except DoigetError as failure:
            report_error(failure, as_json, envelope, shown_ref, ctx)
            raise typer.Exit(failure.exit_status) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            internal = DoigetError(
                ErrorCode.INTERNAL_ERROR,
                f"unexpected {type(exc).__name__}; the traceback above says where. "
                "Please report it.",
            )
            report_error(internal, as_json, envelope, shown_ref)
            raise typer.Exit(internal.exit_status) from None

    return wrapper


# The papers commands' (and the system commands') error shape.
handles_errors = handles_errors_as(PAPERS_ENVELOPE)


def run_closing(
    core: CoreT, work: Callable[[CoreT], Awaitable[R]], shared: Runtime | None = None
) -> R:
    """Run ``work(core)`` on a fresh event loop, closing ``core`` whatever happens, then
    the network of ``shared``, the runtime the core took it from (its pools belong to
    this loop)."""

    async def main() -> R:
        try:
            return await work(core)
        finally:
            await core.aclose()
            if shared is not None:
                await shared.aclose()

    return anyio.run(main)


_STYLE = {"retraction": "bold red", "withdrawal": "bold red", "expression_of_concern": "yellow"}


def notices_text(notices: list[dict[str, Any]]) -> Text:
    """Integrity notices for people: 'retraction 2010-02-06 10.1016/...; correction ...'."""
    text = Text()
    for position, notice in enumerate(notices):
        if position:
            text.append("; ")
        text.append(notice["kind"].replace("_", " "), style=_STYLE.get(notice["kind"], ""))
        for name in ("date", "notice_doi"):
            if notice.get(name):
                text.append(f" {notice[name]}")
        if notice.get("notice_of"):
            text.append(f" of {notice['notice_of']}")
    return text
