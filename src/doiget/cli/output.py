"""How the CLI speaks: JSON or rich text on stdout, errors on stderr, exit codes."""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio
import typer

from doiget.contract import Closable
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


def state(ctx: Any) -> CliState:
    """The CLI state stored on the root context (typer's or its click's Context)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def wants_json(ctx: typer.Context, local_flag: bool) -> bool:
    """``--json`` given globally or on the command itself."""
    return local_flag or state(ctx).json


def runtime(ctx: typer.Context, overrides: Mapping[str, str] | None = None) -> Runtime:
    """Load settings and profile once, print the banner to stderr, configure logging.

    ``overrides`` are command-line options that stand in for their environment variable.
    """
    cli = state(ctx)
    if cli.runtime is None:
        cli.runtime = load_runtime({**os.environ, **overrides} if overrides else None)
        start_logging(cli.runtime)
    return cli.runtime


def emit_json(payload: Any) -> None:
    """One JSON object on one line of stdout (the shape of the matching MCP tool result)."""
    typer.echo(redact_known(json.dumps(payload, ensure_ascii=False)))


def report_error(
    error: DoigetError,
    as_json: bool,
    envelope: Envelope = PAPERS_ENVELOPE,
    ref: str | None = None,
) -> None:
    """An error: with ``--json``, on stdout, the JSON the matching MCP tool returns
    for it; else one readable line on stderr. Either way a tool named as the next
    step is named as its command."""
    if as_json:
        typer.echo(redact_known(for_command_line(envelope.failure(error, ref).text)))
    else:
        line = f"doiget: {error.code.value}: {error.message}"
        typer.echo(redact_known(for_command_line(line)), err=True)


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
            report_error(failure, as_json, envelope, shown_ref)
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
