"""How ``--help`` reads: a flag shows no value placeholder (it takes none), and a
command's description is whole paragraphs, re-wrapped to the terminal, in the list of
commands as on its own page."""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer.core import TyperOption


def paragraphs(text: str) -> str:
    """``text`` (a docstring) with each paragraph on one line, so that the help
    renderer wraps it to the terminal rather than at the docstring's own breaks."""
    return "\n\n".join(" ".join(block.split()) for block in inspect.cleandoc(text).split("\n\n"))


def tidy(app: typer.Typer) -> None:
    """Give every command of ``app`` and of its groups its help as :func:`paragraphs`."""
    for command in app.registered_commands:
        text = command.help or (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = paragraphs(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            tidy(group.typer_instance)


def _flag_without_placeholder() -> None:
    """Typer shows the value type beside every option, ``<bool>`` beside a flag too,
    which reads as if the flag took a value."""
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None:  # a Typer that shows no type beside options
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flag_without_placeholder()
