"""A canary in every secret setting, DEBUG logging, and upstreams that echo it back
(whole, upper-cased, cut short): the canary shows in no stdout, no stderr, no file
and no tool result, over the command line and over MCP, in every toolset."""

from __future__ import annotations

import json
import secrets
import socket
from pathlib import Path

import pytest
from mcputil import mcp_session

from doiget.config import CORE_SETTINGS
from doiget.upstreams import Redaction, agree_var, all_upstreams

from cliutil import doiget
from replay import ReplayUpstream, Reply

SECRET_SETTINGS = [
    setting
    for setting in (
        *CORE_SETTINGS,
        *(s for upstream in all_upstreams() for s in upstream.settings),
    )
    if setting.redaction is not Redaction.NONE
]
TDM_PUBLISHERS = ("elsevier", "aps", "springer")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _canaries() -> dict[str, str]:
    """A distinct random canary per secret setting (its first 8 characters are unique)."""
    return {s.env: f"cn{secrets.token_hex(4)}{secrets.token_hex(8)}" for s in SECRET_SETTINGS}


def _environment(
    doiget_env: dict[str, str], canaries: dict[str, str], *, operators: bool
) -> dict[str, str]:
    """Every key setting holds its canary; with ``operators``, the service URLs too
    (a password inside each, the services on a closed loopback port). The canaries
    of settings left unset are dropped from ``canaries``."""
    env = {**doiget_env, "DOIGET_LOG_LEVEL": "DEBUG", "DOIGET_ENABLE_S2": "1"}
    port = _closed_port()
    for setting in SECRET_SETTINGS:
        canary = canaries[setting.env]
        if setting.redaction is Redaction.VALUE:
            env[setting.env] = canary
        elif operators and setting.env == "REDIS_URL":
            env[setting.env] = f"redis://:{canary}@127.0.0.1:{port}/0"
        elif operators:
            env[setting.env] = f"https://user:{canary}@127.0.0.1:{port}/"
        else:
            del canaries[setting.env]
    env.update({agree_var(publisher): "1" for publisher in TDM_PUBLISHERS})
    return env


def _echoes(canary: str) -> str:
    return f"key {canary} / {canary.upper()} / {canary[:10]}"


def _route_echoes(upstream: ReplayUpstream, canaries: dict[str, str]) -> None:
    every = " ; ".join(_echoes(canary) for canary in canaries.values())
    s2 = canaries["SEMANTIC_SCHOLAR_API_KEY"]
    pubmed = canaries["PUBMED_API_KEY"]
    upstream.json(
        "api.semanticscholar.org",
        "/graph/v1/paper/search",
        {"message": f"Forbidden for key {_echoes(s2)}"},
        status=403,
    )
    upstream.json(
        "api.semanticscholar.org",
        "/graph/v1/paper/DOI:10.1038/nature12373",
        {"message": f"Forbidden for key {_echoes(s2)}"},
        status=403,
    )
    upstream.route(
        "eutils.ncbi.nlm.nih.gov",
        "/entrez/eutils/esearch.fcgi",
        Reply(400, f"<ERROR>API key invalid: {_echoes(pubmed)}</ERROR>".encode()),
    )
    upstream.json("api.search.brave.com", "/res/v1/web/search", {"error": every}, status=422)
    upstream.json(
        "www.googleapis.com", "/customsearch/v1", {"error": {"message": every}}, status=400
    )
    upstream.json("api.tavily.com", "/search", {"detail": {"error": every}}, status=400)
    upstream.json("api.lens.org", "/patent/search", {"message": every}, status=400)
    upstream.route(
        "blog.example.org",
        "/canary",
        Reply(
            200,
            f"<html><body><h1>Echo</h1><p>{every}</p></body></html>".encode(),
            {"Content-Type": "text/html"},
        ),
    )
    upstream.route("api.crossref.org", "/works/10.1038/nature12373", Reply(400, every.encode()))
    upstream.route("api.unpaywall.org", "/v2/10.1038/nature12373", Reply(401, every.encode()))


def _leaks(text: str, canaries: dict[str, str]) -> list[str]:
    lowered = text.lower()
    return [env for env, canary in canaries.items() if canary[:8].lower() in lowered]


def _files_text(root: Path) -> str:
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace") for path in root.rglob("*") if path.is_file()
    )


CLI_CALLS = [
    ("scholar", "s2", "search", "turing", "--json"),
    ("scholar", "pubmed", "search", "turing", "--json"),
    ("web", "search", "q", "--provider", "brave", "--json"),
    ("web", "search", "q", "--provider", "google", "--json"),
    ("web", "search", "q", "--provider", "tavily", "--json"),
    ("web", "search", "q", "--provider", "searxng", "--json"),
    ("web", "patents", "q", "--json"),
    ("web", "scrape", "https://blog.example.org/canary", "--json"),
    ("fetch", "10.1038/nature12373", "--json"),
    ("query", "anything", "--json"),
    ("capabilities", "--json"),
]


@pytest.mark.parametrize("operators", [False, True], ids=["api-keys", "operator-urls"])
def test_no_canary_leaks_through_the_command_line(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path, operators: bool
) -> None:
    canaries = _canaries()
    env = _environment(doiget_env, canaries, operators=operators)
    _route_echoes(upstream, canaries)
    ran = 0
    for call in CLI_CALLS:
        done = doiget(*call, env=env)
        assert "Traceback" not in done.stderr, (call, done.stderr[-2000:])
        leaked = _leaks(done.stdout + done.stderr, canaries)
        assert not leaked, (call, leaked)
        ran += 1
    assert ran == len(CLI_CALLS)
    assert upstream.requests_to("api.semanticscholar.org"), "the echoing upstream was never asked"
    assert not _leaks(_files_text(tmp_path), canaries)


async def test_no_canary_leaks_through_mcp(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    canaries = _canaries()
    env = _environment(doiget_env, canaries, operators=False)
    _route_echoes(upstream, canaries)
    calls = [
        ("search_semantic_scholar", {"query": "turing"}),
        ("search_pubmed", {"query": "turing"}),
        ("web_search", {"query": "q", "provider": "brave"}),
        ("web_search", {"query": "q", "provider": "google"}),
        ("scrape_page", {"url": "https://blog.example.org/canary"}),
        ("patent_search", {"query": "q"}),
        ("doiget_fetch_paper", {"ref": "10.1038/nature12373"}),
        ("doiget_capability_profile", {}),
    ]
    async with mcp_session(env, toolsets="papers,scholar,web,library") as session:
        for tool, arguments in calls:
            result = await session.call_tool(tool, arguments)
            shown = json.dumps(result.model_dump(mode="json"))
            assert not _leaks(shown, canaries), (tool, _leaks(shown, canaries))
    assert not _leaks(_files_text(tmp_path), canaries)
