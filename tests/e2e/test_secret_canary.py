"""A canary in every secret setting, DEBUG logging, and upstreams that echo it back
(whole, upper-cased, cut at either end, percent-encoded, in hex, in base64 alone or
in a Basic pair, behind a redirect that httpx logs): the canary in none of these
encodings shows in any stdout, stderr, file (logs and provenance included) or tool
result, over the command line and over MCP, in every toolset."""

from __future__ import annotations

import base64
import json
import secrets
import socket
from pathlib import Path

import pytest
from mcputil import mcp_session

from doiget.config import CORE_SETTINGS
from doiget.upstreams import Redaction, agree_var, all_upstreams
from doiget.upstreams.google import CX_VAR as GOOGLE_CX_VAR

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
    env[GOOGLE_CX_VAR] = "canary-engine"  # not a secret, but google needs it to run
    return env


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _percent(text: str, every: int = 1) -> str:
    """``text`` with every ``every``-th character percent-encoded (alternating hex case)."""
    return "".join(
        (f"%{ord(ch):02X}" if i % 2 else f"%{ord(ch):02x}") if i % every == 0 else ch
        for i, ch in enumerate(text)
    )


def _echoes(canary: str) -> str:
    """The canary as upstreams echo it: whole, re-cased, cut at either end, percent-
    encoded (all or some characters), in hex, in base64 / base64url, in Basic pairs."""
    return " / ".join(
        (
            f"key {canary}",
            canary.upper(),
            canary[:10],
            canary[3:],
            canary[2:-5],
            _percent(canary),
            _percent(canary, every=3),
            canary.encode().hex().upper(),
            _b64(canary),
            _b64url(canary),
            *(f"Basic {_b64(user + ':' + canary)}" for user in ("u", "us", "usr")),
            f"Basic {_b64(canary + ':x')}",
        )
    )


def _tell_tales(canary: str) -> list[str]:
    """Pieces (lower-cased) that only a copy of ``canary`` in some encoding contains."""
    pieces = [canary[:8], canary[3:11], canary[-8:], canary.encode().hex()[4:16]]
    pieces += [_percent(canary)[:12], _percent(canary, every=3)[:10]]
    for prefix in ("", "u:", "us:"):  # the three base64 alignments
        for encoded in (_b64(prefix + canary), _b64url(prefix + canary)):
            pieces.append(encoded[8:20])
    return [piece.lower() for piece in pieces]


def _route_echoes(upstream: ReplayUpstream, canaries: dict[str, str]) -> None:
    every = " ; ".join(_echoes(canary) for canary in canaries.values())
    s2 = canaries["SEMANTIC_SCHOLAR_API_KEY"]
    pubmed = canaries["PUBMED_API_KEY"]
    google = canaries["GOOGLE_API_KEY"]
    epo = f"{canaries['EPO_OPS_KEY']}:{canaries['EPO_OPS_SECRET']}"
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
    upstream.json(
        "ops.epo.org",
        "/3.2/auth/accesstoken",
        {"error": "invalid_client", "error_description": f"bad Basic {_b64(epo)} ; {every}"},
        status=400,
    )
    upstream.json("api.search.brave.com", "/res/v1/web/search", {"error": every}, status=422)
    upstream.redirect(
        "www.googleapis.com",
        "/customsearch/v1",
        f"https://www.googleapis.com/customsearch/v1/moved?k={_b64url(google)}&cx=1",
    )
    upstream.json(
        "www.googleapis.com",
        "/customsearch/v1/moved",
        {"error": {"message": every}},
        status=400,
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
    return [
        env
        for env, canary in canaries.items()
        if any(piece in lowered for piece in _tell_tales(canary))
    ]


def _assert_every_echo_was_asked(upstream: ReplayUpstream) -> None:
    """The echoing upstreams were reached, the redirect to ``?k=`` followed included."""
    asked = {(seen.host, seen.path) for seen in upstream.requests}
    for host, path in (
        ("api.semanticscholar.org", "/graph/v1/paper/search"),
        ("api.search.brave.com", "/res/v1/web/search"),
        ("www.googleapis.com", "/customsearch/v1/moved"),
        ("api.lens.org", "/patent/search"),
        ("ops.epo.org", "/3.2/auth/accesstoken"),
    ):
        assert (host, path) in asked, f"{host}{path} was never asked"


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
    _assert_every_echo_was_asked(upstream)
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
    _assert_every_echo_was_asked(upstream)
    assert not _leaks(_files_text(tmp_path), canaries)
