"""README.md's command reference and settings table are what the code renders, and its
examples name commands and options that exist."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import typer
import typer.main

from doiget.cli.main import app
from doiget.cli.reference import README, REGENERATE, sections, stale

_SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def test_generated_parts_of_the_readme_match_the_code() -> None:
    names = stale(README.read_text(encoding="utf-8"))
    assert not names, f"README.md is stale ({', '.join(names)}); regenerate it: {REGENERATE}"


def test_generated_text_ignores_the_terminal_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = [section.text for section in sections()]
    monkeypatch.setenv("COLUMNS", "20")
    monkeypatch.setenv("DOIGET_TOOLSETS", "papers")
    monkeypatch.setenv("TERM", "dumb")
    assert [section.text for section in sections()] == before


def _example_invocations() -> list[list[str]]:
    """The words of every ``doiget ...`` line in the README's sh examples."""
    invocations = []
    for block in _SH_BLOCK.findall(README.read_text(encoding="utf-8")):
        for line in block.splitlines():
            _, found, command = line.partition("doiget ")
            if not found or not line.lstrip().startswith(("doiget ", "cat ")):
                continue
            words = []
            for word in shlex.split(command, comments=True):
                if word in ("|", ">", ">>"):
                    break
                words.append(word.strip("[]"))
            invocations.append(words)
    return invocations


def _options(command: Any) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def test_readme_examples_use_commands_and_options_that_exist() -> None:
    root = typer.main.get_command(app)
    examples = _example_invocations()
    assert len(examples) > 20
    for words in examples:
        command, ctx, path = root, typer.Context(root, info_name="doiget"), ["doiget"]
        for word in words:
            if word.startswith("-"):
                name = word.partition("=")[0]
                if name.startswith("--"):
                    assert name in _options(command) | _options(root), f"{path}: {name}"
            elif hasattr(command, "list_commands"):
                assert word in command.list_commands(ctx), f"{' '.join(path)} has no {word}"
                command = command.get_command(ctx, word)
                ctx = typer.Context(command, info_name=word, parent=ctx)
                path.append(word)
        assert not hasattr(command, "list_commands"), f"{' '.join(words)}: no command"
