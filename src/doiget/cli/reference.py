"""The README's generated parts: the command reference and the settings table.

Both are rendered from the code (the command tree, the settings declarations) and
written between markers in README.md, so the README cannot drift from the program:
a test compares the two. Nothing here depends on the terminal width or the
environment.

    python -m doiget.cli.reference           # exit 1 and name the stale parts, if any
    python -m doiget.cli.reference --print   # print both parts
    python -m doiget.cli.reference --write   # rewrite them in README.md
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
import typer.main

from doiget.config import settings_table_markdown

REGENERATE = "python -m doiget.cli.reference --write"
README = Path(__file__).resolve().parents[3] / "README.md"
_ARGUMENT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class Section:
    """A generated part of the README and the marker name that fences it."""

    name: str
    text: str

    @property
    def start(self) -> str:
        return f"<!-- generated: {self.name} ({REGENERATE}) -->"

    @property
    def end(self) -> str:
        return f"<!-- end generated: {self.name} -->"


def cli_reference_markdown() -> str:
    """Every command and group of ``doiget``, in the order the program declares them,
    with its arguments and options."""
    from doiget.cli.main import app

    root = typer.main.get_command(app)
    root_ctx = typer.Context(root, info_name="doiget")
    blocks = [_command_block(root, root_ctx, "doiget")]
    blocks += [_command_block(c, ctx, path) for c, ctx, path in _subcommands(root, root_ctx)]
    return "\n\n".join(blocks)


def sections() -> list[Section]:
    """The README's generated parts, rendered now."""
    return [
        Section("cli-reference", cli_reference_markdown()),
        Section("settings", settings_table_markdown()),
    ]


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
        lines += [f"| `{_names(names)}` | {_cell(help_text)} |" for names, help_text in records]
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


def _cell(text: str) -> str:
    """Text that stays in one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def replaced(readme: str, section: Section) -> str:
    """``readme`` with ``section``'s fenced part rewritten; ValueError without markers."""
    start, end = readme.find(section.start), readme.find(section.end)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the markers of the {section.name} part")
    return readme[: start + len(section.start)] + f"\n{section.text}\n" + readme[end:]


def stale(readme: str) -> list[str]:
    """Names of the generated parts that differ from what the code renders now."""
    names = []
    for section in sections():
        if replaced(readme, section) != readme:
            names.append(section.name)
    return names


def main(argv: list[str] | None = None) -> int:
    """Check (default), ``--print`` or ``--write`` the README's generated parts."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--print"]:
        for section in sections():
            print(f"{section.start}\n{section.text}\n{section.end}\n")
        return 0
    readme = README.read_text(encoding="utf-8")
    if args == ["--write"]:
        for section in sections():
            readme = replaced(readme, section)
        README.write_text(readme, encoding="utf-8")
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    names = stale(readme)
    if names:
        print(f"README.md is stale ({', '.join(names)}); run: {REGENERATE}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
