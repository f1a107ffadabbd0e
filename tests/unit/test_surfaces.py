"""Advice is written once and read in each surface's words."""

from __future__ import annotations

import json

import pytest

from doiget.surfaces import call_with, for_command_line


@pytest.mark.parametrize(
    ("advice", "command"),
    [
        (call_with("index_papers", create="true"), "`doiget index --create`"),
        (
            call_with("index_papers", project="lab.x/y-z", create="true"),
            "`doiget index --project lab.x/y-z --create`",
        ),
        (call_with("index_papers", force_rebuild="true"), "`doiget index --force-rebuild`"),
        # An argument the command has no option for: the command alone, never a wrong flag.
        (call_with("index_papers", refs="x"), "`doiget index`"),
    ],
)
@pytest.mark.parametrize("around", ["call {}.", "call {}", "call {}; then", "({})"])
def test_a_tools_arguments_become_the_commands_options(
    advice: str, command: str, around: str
) -> None:
    text = around.format(advice)
    assert for_command_line(text) == around.format(command)
    # Inside a JSON document (the --json error) the closing quote ends the value too.
    assert json.loads(for_command_line(json.dumps({"m": text})))["m"] == around.format(command)


def test_a_tool_without_a_command_is_left_as_the_agent_reads_it() -> None:
    text = f"or call {call_with('store_chunks', force_rebuild='true')} to drop it"
    assert for_command_line(text) == text
