"""The command reference in Markdown: every command and group of ``doiget`` with its
arguments and options, rendered from the command tree. Nothing here depends on the
terminal width or the environment; doiget.reference writes it into the documentation.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

import typer
import typer.main

_ARGUMENT = re.compile(r"\{(\w+)\}")


def cli_reference_markdown() -> str:
    """Every command and group of ``doiget``, in the order the program declares them,
    with its arguments and options."""
    from doiget.cli.main import app

    root = typer.main.get_command(app)
    root_ctx = typer.Context(root, info_name="doiget")
    blocks = [_command_block(root, root_ctx, "doiget")]
    blocks += [_command_block(c, ctx, path) for c, ctx, path in _subcommands(root, root_ctx)]
    return "\n\n".join(blocks)


def _subcommands(group: Any, ctx: Any) -> Iterator[tuple[Any, Any, str]]:
    """(command, its context, its full name) for every command below ``group``, in the
    order the program declares them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub_ctx = typer.Context(command, info_name=name, parent=ctx)
        yield command, sub_ctx, sub_ctx.command_path
        if hasattr(command, "list_commands"):
            yield from _subcommands(command, sub_ctx)


def _command_block(command: Any, ctx: Any, path: str) -> str:
    usage = " ".join(
        _ARGUMENT.sub(lambda m: m.group(1).upper(), piece)
        for piece in command.collect_usage_pieces(ctx)
    )
    lines = [f"#### `{path} {usage}`", "", _paragraphs(command.help or "")]
    records = [
        record
        for param in command.params
        if not getattr(param, "hidden", False)
        for record in [param.get_help_record(ctx)]
        if record is not None
    ]
    if records:
        lines += ["", "| argument / option | meaning |", "|---|---|"]
        lines += [
            f"| `{_names(names)}` | {table_cell(help_text)} |" for names, help_text in records
        ]
    return "\n".join(lines)


def _names(record: str) -> str:
    """``ref <str>`` as ``REF <str>``: an argument's name as the usage line spells it."""
    first, _, rest = record.partition(" ")
    if first.startswith("-"):
        return record
    head = first.removesuffix("...").upper() + ("..." if first.endswith("...") else "")
    return f"{head} {rest}".strip()


def _paragraphs(text: str) -> str:
    """A docstring's paragraphs, each on one line."""
    blocks = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(block.split()) for block in blocks if block.strip())


def table_cell(text: str) -> str:
    """Text that stays in one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")
