"""What a partial install serves and says: a toolset whose extra is missing is not
listed, capabilities says why and how to install it; health and capabilities show
where doiget keeps its files and whether Unpaywall can be asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcputil import mcp_session

from cliutil import doiget


def without_library_extra(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``env`` in which the library extra's modules cannot be found, as in a base
    install (a sitecustomize marks them missing before doiget starts)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nsys.modules['sentence_transformers'] = None\n"
    )
    inherited = env.get("PYTHONPATH", os.environ.get("PYTHONPATH"))
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(shim), inherited]))}


async def test_a_toolset_without_its_extra_is_not_listed(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = without_library_extra(doiget_env, tmp_path)
    async with mcp_session(env, toolsets="papers,library") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
    assert "doiget_fetch_paper" in names
    assert not names & {"find_chunks", "query_hybrid", "index_papers", "list_projects"}
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        full = {tool.name for tool in (await session.list_tools()).tools}
    assert {"find_chunks", "index_papers"} <= full


def test_capabilities_say_why_a_toolset_is_off_and_how_to_install_it(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    wide = {**doiget_env, "COLUMNS": "400"}  # one line per table row
    done = doiget("capabilities", env=without_library_extra(wide, tmp_path))
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "library toolset" in text and "sentence_transformers" in text
    assert "pip install -e '.[library]'" in text
    full = " ".join(doiget("capabilities", env=wide).stdout.split())
    assert "library toolset" in full and "sentence_transformers" not in full
    # A toolset left out of the default selection says how to serve it, not that a
    # variable nobody set left it out.
    assert "DOIGET_TOOLSETS" not in doiget_env
    hint = "not in the selection served (name it in DOIGET_TOOLSETS or --toolsets)"
    assert full.count(hint) == 1 and hint in full[full.index("zotero toolset") :]
    chosen = " ".join(
        doiget("capabilities", env={**wide, "DOIGET_TOOLSETS": "papers"}).stdout.split()
    )
    assert chosen.count(hint) == 4


@pytest.mark.parametrize("zotero", [False, True], ids=["zotero-unset", "zotero-set"])
def test_health_lists_only_the_toolsets_the_server_serves(
    doiget_env: dict[str, str], tmp_path: Path, zotero: bool
) -> None:
    selected = {**doiget_env, "DOIGET_TOOLSETS": "papers,scholar,library,web,zotero"}
    if zotero:
        selected["DOIGET_ZOTERO_LOCAL"] = "1"
    zotero_listed = ["zotero"] if zotero else []
    light_env = without_library_extra(selected, tmp_path)
    light = doiget("health", "--json", env=light_env)
    assert light.returncode == 0, light.stderr
    assert json.loads(light.stdout)["toolsets"] == ["papers", "scholar", "web", *zotero_listed]
    full = json.loads(doiget("health", "--json", env=selected).stdout)
    assert full["toolsets"] == ["papers", "scholar", "library", "web", *zotero_listed]
    shown = doiget("health", env={**light_env, "COLUMNS": "400"})
    row = next(line for line in shown.stdout.splitlines() if "toolsets" in line)
    assert "library" not in row and "papers" in row


def test_health_and_capabilities_show_files_and_the_contact_address(
    doiget_env: dict[str, str],
) -> None:
    report = json.loads(doiget("health", "--json", env=doiget_env).stdout)
    assert report["email_set"] is True
    assert report["data_dir"] == doiget_env["DOIGET_DATA_DIR"]
    assert report["config_path"] == doiget_env["DOIGET_CONFIG"]
    assert report["config_exists"] is False
    no_email = {k: v for k, v in doiget_env.items() if k != "DOIGET_EMAIL"} | {"COLUMNS": "400"}
    assert json.loads(doiget("health", "--json", env=no_email).stdout)["email_set"] is False
    shown = " ".join(doiget("capabilities", env=no_email).stdout.split())
    assert "set DOIGET_EMAIL" in shown and doiget_env["DOIGET_DATA_DIR"] in shown
