"""The documentation's generated reference (commands, settings, MCP tools, error codes)
is what the code renders, and the examples in the README and the documentation name
commands and options that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from doiget.cli.main import app
from doiget.errors import MEANING, ErrorCode
from doiget.reference import (
    DOCS,
    REGENERATE,
    Section,
    documented_examples,
    example_groups,
    main,
    sections,
    stale,
)

_SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
_PAGES = [DOCS.parent / "README.md", *sorted(DOCS.rglob("*.md"))]
_PROGRAM = ("doiget ", ".venv/bin/doiget ")


def test_generated_reference_matches_the_code() -> None:
    names = stale()
    assert not names, f"docs/reference is stale ({', '.join(names)}); regenerate it: {REGENERATE}"


def test_a_stale_page_is_named_and_rewritten(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    section = Section("part", "new text", page)
    page.write_text(f"# Title\n\n{section.start}\nold text\n{section.end}\n", encoding="utf-8")
    assert stale([section]) == ["part"]
    assert stale([Section("part", "old text", page)]) == []
    section.page.write_text(section.start + "\n" + section.end, encoding="utf-8")
    assert stale([section]) == ["part"]


def test_the_check_exits_1_when_a_page_is_stale(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "page.md"
    section = Section("part", "new", page)
    page.write_text(f"{section.start}\nold\n{section.end}\n", encoding="utf-8")
    monkeypatch.setattr("doiget.reference.sections", lambda: [section])
    assert main([]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert main(["--write"]) == 0
    assert page.read_text(encoding="utf-8") == f"{section.start}\nnew\n{section.end}\n"
    assert main([]) == 0


def test_every_error_code_says_what_to_do_next() -> None:
    assert set(MEANING) == set(ErrorCode)
    errors_page = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8")
    for code in ErrorCode:
        assert f"| `{code}` |" in errors_page


def test_every_tool_has_its_reference_entry() -> None:
    from doiget.server.snapshot import stored

    tools_page = (DOCS / "reference" / "tools.md").read_text(encoding="utf-8")
    for manifest in stored().values():
        for tool in manifest["tools"]:
            assert f"### `{tool['name']}`" in tools_page


def test_every_tool_has_an_example_run_by_a_test() -> None:
    from doiget.server.snapshot import stored

    examples = documented_examples()
    tools = {tool["name"] for manifest in stored().values() for tool in manifest["tools"]}
    assert sorted(tools - set(examples)) == []
    assert set(examples) <= tools
    e2e = DOCS.parent / "tests" / "e2e"
    for group in example_groups():
        module = e2e / f"test_docs_examples_{group}.py"
        assert f'check_group("{group}"' in module.read_text(encoding="utf-8"), module


def test_generated_text_ignores_the_terminal_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = [section.text for section in sections()]
    monkeypatch.setenv("COLUMNS", "20")
    monkeypatch.setenv("DOIGET_TOOLSETS", "papers")
    monkeypatch.setenv("TERM", "dumb")
    assert [section.text for section in sections()] == before


def _example_invocations() -> list[list[str]]:
    """The words of every ``doiget ...`` line in the sh examples of the README and the
    documentation."""
    invocations = []
    blocks = [b for page in _PAGES for b in _SH_BLOCK.findall(page.read_text(encoding="utf-8"))]
    for block in blocks:
        for line in block.splitlines():
            _, found, command = line.partition("doiget ")
            if not found or not line.lstrip().startswith((*_PROGRAM, "cat ")):
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


def test_the_readme_is_a_front_door_with_the_test_command_ci_runs() -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    ci = (DOCS.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    test_command = ci[ci.index("# The test command, exactly as the README gives it:") + 1]
    assert f"```sh\n{test_command}\n```" in readme
    assert len(readme.splitlines()) <= 150
