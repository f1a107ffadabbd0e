"""DOIGET_TOOLSETS=dynamic: how it is read, what doiget_toolsets costs an agent to list,
and that its names, summaries and core match the toolsets the server has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from doiget.config import DEFAULT_TOOLSETS, KNOWN_TOOLSETS, load_settings, parse_toolsets
from doiget.errors import DoigetError, ErrorCode
from doiget.server.dynamic import CORE, SUMMARIES, DynamicToolsets, ToolsetName
from doiget.server.snapshot import stored
from doiget.server.toolset import SECTIONS


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"DOIGET_CONFIG": str(tmp_path / "none.toml"), "DOIGET_DATA_DIR": str(tmp_path), **extra}


def test_the_switch_fits_the_budget_in_the_six_sections() -> None:
    tool = DynamicToolsets({}, {}).tool
    schema = json.dumps(tool.input_schema, separators=(",", ":"), ensure_ascii=False)
    assert len((tool.name + tool.description + schema).encode()) <= 900
    assert [line.split(":")[0] + ":" for line in tool.description.splitlines()] == list(SECTIONS)
    assert tool.hints.read_only and not tool.hints.destructive


def test_every_toolset_has_a_name_and_summary_and_every_core_tool_exists() -> None:
    assert get_args(ToolsetName) == KNOWN_TOOLSETS
    assert tuple(SUMMARIES) == KNOWN_TOOLSETS
    served = {tool["name"] for name in DEFAULT_TOOLSETS for tool in stored()[name]["tools"]}
    assert set(CORE) <= served


@pytest.mark.parametrize("raw", ["dynamic", " dynamic ", "dynamic,dynamic", ["dynamic"]])
def test_dynamic_alone_is_read_as_dynamic(raw: str | list[str]) -> None:
    assert parse_toolsets(raw) == ("dynamic",)


@pytest.mark.parametrize("raw", ["dynamic,papers", "papers,dynamic", "Dynamic"])
def test_dynamic_with_anything_else_is_refused(raw: str) -> None:
    with pytest.raises(DoigetError) as refused:
        parse_toolsets(raw, "--toolsets")
    assert refused.value.code == ErrorCode.INVALID_CONFIG
    assert "--toolsets" in refused.value.message and "dynamic alone" in refused.value.message


def test_dynamic_settings_offer_every_toolset_this_setup_can_serve(tmp_path: Path) -> None:
    plain = load_settings(_env(tmp_path, DOIGET_TOOLSETS="dynamic"))
    zotero = load_settings(_env(tmp_path, DOIGET_TOOLSETS="dynamic", DOIGET_ZOTERO_LOCAL="1"))
    fixed = load_settings(_env(tmp_path, DOIGET_TOOLSETS="papers"))
    assert (plain.dynamic_toolsets, plain.toolsets) == (True, DEFAULT_TOOLSETS)
    assert (zotero.dynamic_toolsets, zotero.toolsets) == (True, (*DEFAULT_TOOLSETS, "zotero"))
    assert (fixed.dynamic_toolsets, fixed.toolsets) == (False, ("papers",))
