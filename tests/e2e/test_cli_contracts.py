"""What a new user meets first, on both faces: error codes and words, echoes, on/off
settings, the capability profile, what the command line prints, and index_papers'
edges. Each case here failed before the fix it guards."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from mcp.shared.exceptions import MCPError
from mcputil import call, mcp_session

from cliutil import doiget
from papersutil import NATURE, route_nature
from replay import ReplayUpstream

LONG = "10.1234/" + "x" * 100_000


# -- error codes, and the option named as the surface says it ---------------------------


@pytest.mark.parametrize(
    ("command", "line_start", "named"),
    [
        (("web", "search", "q", "-n", "50"), "doiget: validation: ", "--num-results"),
        (("web", "search", "q", "--safe", "bogus"), "doiget: validation: ", "--safe"),
        (
            ("web", "scrape", "https://example.org/", "--mode", "bogus"),
            "doiget: validation: ",
            "--mode",
        ),
        (("web", "search", "q", "--session", "a b"), "doiget: validation: ", "--session"),
        (
            ("scholar", "arxiv", "search", "q", "--sort", "bogus"),
            "doiget: Invalid parameter: ",
            "--sort",
        ),
        (
            ("query", "doiget/papers", "q", "--filter", "year=abc"),
            "doiget: INVALID_ARGUMENT: ",
            "--filter year",
        ),
        (
            ("query", "doiget/papers", "q", "--filter", "year=20x1"),
            "doiget: INVALID_ARGUMENT: ",
            "--filter year",
        ),
        (
            ("query", "doiget/papers", "q", "--filter", "colour=red"),
            "doiget: INVALID_ARGUMENT: ",
            "--filter",
        ),
        (
            ("query", "doiget/papers", "q", "--filter", "nokey"),
            "doiget: INVALID_ARGUMENT: ",
            "--filter",
        ),
    ],
)
def test_a_bad_option_gets_its_toolsets_code_and_is_named_as_the_option(
    doiget_env: dict[str, str], command: tuple[str, ...], line_start: str, named: str
) -> None:
    done = doiget(*command, env=doiget_env)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(line_start), line
    assert named in line, line
    for wire in ("num_results", "sortBy", "sessionId", "filters."):
        assert wire not in line, line
    assert "INVALID_REF" not in done.stderr


async def test_a_year_filter_that_is_not_a_number_is_refused_over_mcp_too(
    doiget_env: dict[str, str],
) -> None:
    arguments = {"project": "doiget/papers", "query": "q", "filters": {"year": "abc"}}
    async with mcp_session(doiget_env, toolsets="library") as session:
        result = await session.call_tool("find_chunks", arguments)
    assert result.is_error and result.structured_content is not None
    error = result.structured_content["error"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["message"].startswith("filters.year ")


async def test_an_unknown_tool_is_the_protocols_unknown_tool_error(
    doiget_env: dict[str, str],
) -> None:
    async with mcp_session(doiget_env, toolsets="papers") as session:
        for name in ("no_such_tool", "doiget_fetch_paper\n", "x" * 10_000):
            with pytest.raises(MCPError) as caught:
                await session.call_tool(name, {})
            assert caught.value.code == -32602
            assert caught.value.message.startswith("Unknown tool: ")
            assert len(caught.value.message) < 200
        # The session goes on.
        assert (await call(session, "doiget_capability_profile"))["ok"] is True


# -- echoes -----------------------------------------------------------------------------


def test_a_huge_ref_is_not_echoed_whole_by_the_command_line(doiget_env: dict[str, str]) -> None:
    for command in (("info", LONG), ("info", LONG, "--json"), ("resolve", LONG, "--json")):
        done = doiget(*command, env=doiget_env)
        assert done.returncode == 2
        assert len(done.stdout) + len(done.stderr) < 2_000, command


async def test_a_huge_input_is_not_echoed_whole_by_any_tool(doiget_env: dict[str, str]) -> None:
    calls = [
        ("doiget_info", {"ref": LONG}),
        ("doiget_resolve_paper", {"ref": LONG}),
        ("doiget_bibtex_export", {"refs": [LONG]}),
        ("get_arxiv_paper", {"arxivId": LONG}),
        ("get_pubmed_paper", {"pmid": LONG}),
        ("find_chunks", {"project": LONG, "query": "q"}),
        ("find_chunks", {"project": "doiget/papers", "query": "q", "filters": {LONG: 1}}),
        ("scrape_page", {"url": "https://" + "x" * 3000}),
        ("web_search", {"query": "q", "provider": LONG}),
        ("get_research_session", {"sessionId": LONG}),
    ]
    async with mcp_session(doiget_env, toolsets="papers,scholar,library,web") as session:
        for tool, arguments in calls:
            result = await session.call_tool(tool, arguments)
            assert result.is_error, tool
            text = result.content[0].text  # type: ignore[union-attr]
            assert len(text) < 2_000, (tool, len(text))


# -- on/off settings --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "False"])
def test_an_enable_variable_set_to_off_refuses_to_start(
    doiget_env: dict[str, str], value: str
) -> None:
    for command in (("capabilities", "--json"), ("serve", "--toolsets", "papers")):
        done = doiget(*command, env={**doiget_env, "DOIGET_ENABLE_OPENALEX": value}, stdin="")
        assert done.returncode == 2, (command, done.stderr)
        assert "INVALID_CONFIG" in done.stdout + done.stderr
        assert "Unset DOIGET_ENABLE_OPENALEX" in done.stdout + done.stderr


@pytest.mark.parametrize("value", ["", "1", "true", "yes"])
def test_an_enable_variable_that_is_present_turns_the_source_on(
    doiget_env: dict[str, str], value: str
) -> None:
    done = doiget("capabilities", "--json", env={**doiget_env, "DOIGET_ENABLE_OPENALEX": value})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["metadata_sources"] == ["openalex"]


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("DOIGET_WEB_CACHE", "flase"),
        ("DOIGET_HTTP_METRICS", "maybe"),
        ("DOIGET_HTTP_INSECURE_NO_AUTH", "2"),
        ("DOIGET_BROWSER", "sometimes"),
    ],
)
def test_an_on_off_setting_with_neither_word_is_refused(
    doiget_env: dict[str, str], var: str, value: str
) -> None:
    done = doiget("health", env={**doiget_env, var: value})
    assert done.returncode == 2, done.stderr
    assert f"doiget: INVALID_CONFIG: {var}=" in done.stderr


# -- the capability profile -------------------------------------------------------------

SPEC_KEYS = {
    "oa_enabled",
    "metadata_sources",
    "tdm_enabled",
    "tdm_elsevier",
    "tdm_aps",
    "tdm_springer",
    "tdm_not_installed",
    "rate_limit_per_sec",
    "tdm_agreed_at",
}
SECRET = "brave-key-NEVER-SHOWN-0123456789"


async def test_the_capability_profile_says_what_an_agent_plans_with(
    doiget_env: dict[str, str],
) -> None:
    env = {**doiget_env, "BRAVE_API_KEY": SECRET, "DOIGET_ENABLE_S2": "1"}
    async with mcp_session(env, toolsets="papers,web") as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        profile = await call(session, "doiget_capability_profile")
    schema = listed["doiget_capability_profile"].output_schema
    assert schema is not None
    jsonschema.validate(profile, schema)
    assert set(profile) >= SPEC_KEYS
    assert profile["metadata_sources"] == ["semantic_scholar"]
    assert profile["toolsets"] == ["papers", "web"]
    assert profile["email_set"] is True
    assert profile["web_search_providers"]["brave"] == {"configured": True, "healthy": True}
    assert profile["web_search_providers"]["tavily"]["configured"] is False
    assert set(profile["patent_providers"]) == {"lens", "epo"}
    assert {"arxiv", "s2", "pubmed"} <= set(profile["scholar_providers"])
    assert set(profile["browser_tier"]) == {"usable", "reason"}
    assert profile["library"]["backend"] == "sqlite"
    assert profile["retraction_checks"] is True
    assert SECRET not in json.dumps(profile) and SECRET[:12] not in json.dumps(profile)
    cli = doiget("capabilities", "--json", env={**env, "DOIGET_TOOLSETS": "papers,web"})
    assert json.loads(cli.stdout) == profile


# -- display ----------------------------------------------------------------------------


def test_the_banner_is_for_servers_and_for_commands_only_with_v(
    doiget_env: dict[str, str],
) -> None:
    quiet = doiget("capabilities", "--json", env=doiget_env)
    assert "[doiget] capability" not in quiet.stderr
    loud = doiget("-v", "capabilities", "--json", env=doiget_env)
    assert loud.stderr.count("[doiget] capability") == 1
    served = doiget("serve", "--toolsets", "papers", env=doiget_env, stdin="")
    assert served.stderr.count("[doiget] capability") == 1


def test_health_prints_install_hints_whole(doiget_env: dict[str, str], tmp_path: Path) -> None:
    """No Chromium on PATH: the hint names the browser extra, brackets and all."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**doiget_env, "PATH": str(empty), "COLUMNS": "200"}
    done = doiget("health", env=env)
    assert done.returncode == 0, done.stderr
    assert "'.[browser]'" in done.stdout, done.stdout


def test_tables_fold_long_words_instead_of_cutting_them(doiget_env: dict[str, str]) -> None:
    done = doiget("capabilities", env={**doiget_env, "COLUMNS": "80"})
    assert done.returncode == 0
    assert "…" not in done.stdout
    letters = "".join(ch for ch in done.stdout if ch.isalnum() or ch == "_")
    assert "DOIGET_ENABLE_OPENALEX" in letters


def test_info_shows_each_key_once(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 0
    done = doiget("info", NATURE, env={**doiget_env, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    keys = [line.split("│")[1].strip() for line in done.stdout.splitlines() if line.count("│") == 3]
    assert keys.count("pdf_path") == 1, done.stdout
    assert len(keys) == len(set(keys)), keys


# -- advice in the surface's words -------------------------------------------------------


def test_advice_names_the_command_and_its_options(doiget_env: dict[str, str]) -> None:
    done = doiget("query", "lab/x", "words", env=doiget_env)
    assert done.returncode == 2
    assert "`doiget index --project lab/x --create`" in done.stderr
    assert "pass create" not in done.stderr
    bad = doiget("query", "Lab X", "words", env=doiget_env)
    assert "--create" not in bad.stderr and "namespace/name" in bad.stderr


async def test_advice_over_mcp_names_the_tool_and_its_arguments(
    doiget_env: dict[str, str],
) -> None:
    async with mcp_session(doiget_env, toolsets="library") as session:
        result = await session.call_tool("find_chunks", {"project": "lab/x", "query": "q"})
    assert result.structured_content is not None
    message = result.structured_content["error"]["message"]
    assert "index_papers with project=lab/x and create=true" in message
    assert "doiget index" not in message


# -- identifiers with a trailing newline -------------------------------------------------


async def test_a_project_id_with_a_trailing_newline_is_refused(
    doiget_env: dict[str, str],
) -> None:
    async with mcp_session(doiget_env, toolsets="library") as session:
        made = await session.call_tool(
            "index_papers", {"project": "lab/x\n", "refs": [NATURE], "create": True}
        )
        projects = await session.call_tool("list_projects", {})
    assert made.is_error and made.structured_content is not None
    assert made.structured_content["error"]["code"] == "INVALID_PROJECT"
    assert projects.structured_content is not None
    assert [p["id"] for p in projects.structured_content["projects"]] == ["doiget/papers"]
    assert not Path(doiget_env["DOIGET_CONFIG"]).exists()


# -- index_papers: inputs first, progress within a document ------------------------------


def test_index_answers_before_loading_the_model_when_nothing_is_readable(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    """The model folder holds no model: loading it would fail, so success proves the
    unusable inputs were found first."""
    no_model = tmp_path / "no-model"
    no_model.mkdir()
    env = {**doiget_env, "DOIGET_EMBED_MODEL_PATH": str(no_model)}
    missing = tmp_path / "gone.pdf"
    done = doiget("index", "10.1000/never-stored", str(missing), "--json", env=env)
    report = json.loads(done.stdout)
    assert report["indexed"] == 0 and report["skipped"] == 2, done.stderr
    assert "INDEX_UNAVAILABLE" not in done.stdout + done.stderr
    everything = doiget("index", "--all", "--json", env=env)
    assert everything.returncode == 0, everything.stderr
    assert json.loads(everything.stdout)["documents"] == []


async def test_index_papers_reports_progress_within_a_document(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 0
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with mcp_session(doiget_env, toolsets="library") as session:
        result = await session.call_tool(
            "index_papers", {"refs": [NATURE]}, progress_callback=progress
        )
    assert not result.is_error, result.content
    within = [entry for entry in seen if 0 < entry[0] < 1]
    assert within, seen
    assert all("passages" in (message or "") for _, _, message in within)
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
