"""What a person sees in a terminal: a setting name is never split across lines, a
flag shows no value placeholder, a command's description wraps to the terminal, and
``doiget serve`` started by hand says what it waits for (on stderr)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cliutil import clean_env, command, doiget

# A setting or key name as the output shows it: DOIGET_ENABLE_OPENALEX, BRAVE_API_KEY.
SETTING_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


def names_in(text: str) -> set[str]:
    return set(SETTING_NAME.findall(text))


@pytest.mark.parametrize("columns", ["80", "100"])
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"SEMANTIC_SCHOLAR_API_KEY": "k" * 20, "DOIGET_ENABLE_OPENALEX": "1"},
        {"DOIGET_EMAIL": "", "DOIGET_TOOLSETS": "papers,scholar,library,web,zotero"},
    ],
    ids=["default", "keyed-and-enabled", "no-email-all-toolsets"],
)
def test_capabilities_never_split_a_setting_name(
    doiget_env: dict[str, str], columns: str, extra: dict[str, str]
) -> None:
    env = {**doiget_env, **extra}
    wide = doiget("capabilities", env={**env, "COLUMNS": "400"})
    narrow = doiget("capabilities", env={**env, "COLUMNS": columns})
    assert wide.returncode == narrow.returncode == 0, narrow.stderr
    expected = names_in(wide.stdout)
    assert {"DOIGET_ENABLE_DOAJ", "PUBMED_API_KEY", "DOIGET_ZOTERO_LOCAL"} <= expected
    assert names_in(narrow.stdout) == expected, narrow.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) <= int(columns)


def _commands(group: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every command of the program by its path, groups included."""
    found = {path: group}
    for name, sub in getattr(group, "commands", {}).items():
        found |= _commands(sub, (*path, name))
    return found


def _app() -> Any:
    from doiget.cli.main import app

    return typer.main.get_command(app)


@pytest.mark.parametrize("columns", ["80", "400"])
def test_no_help_shows_a_value_placeholder_for_a_flag(columns: str) -> None:
    from doiget.cli.main import app

    paths = _commands(_app())
    assert len(paths) > 40
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": columns})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, (path, result.output)
        assert "--help" in result.output


def test_every_command_description_is_one_line_in_a_wide_terminal() -> None:
    """A description wraps where the terminal ends, never where its docstring broke."""
    from doiget.cli.main import app

    for path, group in _commands(_app()).items():
        if not hasattr(group, "commands"):
            continue
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "400"}).output
        rows = shown.split("Commands")[1].splitlines()[1:]
        rows = [row for row in rows if row.startswith("│")]
        assert len(rows) == len(group.commands), (path, shown)


def _serve_on_a_terminal(env: dict[str, str], *args: str) -> tuple[str, str]:
    """Run ``doiget *args`` with a terminal as its stdin, end it with Ctrl-D once it
    says it is waiting; its stdout and stderr."""
    controller, terminal = pty.openpty()
    server = subprocess.Popen(
        command(*args),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(env),
    )
    os.close(terminal)
    try:
        assert server.stderr is not None
        seen = b""
        while b"waiting for an MCP client" not in seen:
            line = server.stderr.readline()
            assert line, seen
            seen += line
        os.write(controller, b"\x04")
        out, err = server.communicate(timeout=60)
    finally:
        server.kill()
        os.close(controller)
    assert server.returncode == 0, err
    return out.decode(), (seen + err).decode()


@pytest.mark.parametrize(
    "args", [("serve",), ("serve", "--toolsets", "papers"), ("-v", "serve")], ids=str
)
def test_serve_by_hand_says_on_stderr_what_it_waits_for(
    doiget_env: dict[str, str], args: tuple[str, ...]
) -> None:
    out, err = _serve_on_a_terminal(doiget_env, *args)
    assert out == ""  # stdout carries JSON-RPC frames only
    assert "waiting for an MCP client on stdin" in err and "Ctrl-C" in err


def test_serve_started_by_a_client_prints_no_note(doiget_env: dict[str, str]) -> None:
    done = doiget("serve", env=doiget_env, stdin="")
    assert done.returncode == 0, done.stderr
    assert "waiting for an MCP client" not in done.stderr and done.stdout == ""
