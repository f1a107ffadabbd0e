"""doiget_check_claims over MCP and ``doiget claim``: the spawned server answers each
claim per cited work, with a progress notification per claim; the command line prints
the same document with --json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claimsutil import JOSE_PDF, JOSE_SENTENCE, WAKEFIELD, store_paper
from mcputil import call, mcp_session
from verifyutil import WAKEFIELD_FIXTURE

from cliutil import doiget
from replay import ReplayUpstream, Reply

PNAS = "10.1073/pnas.1414271111"
DOWN = Reply(503, b"Service Unavailable")


def _route(upstream: ReplayUpstream) -> None:
    """The Wakefield record (no abstract, no Open Access copy); Crossref down for PNAS."""
    upstream.fixture("api.crossref.org", f"/works/{WAKEFIELD}", WAKEFIELD_FIXTURE)
    upstream.route("api.crossref.org", f"/works/{PNAS}", DOWN)


async def test_each_claim_is_answered_per_work_with_a_progress_notification_each(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _route(upstream)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    items = [
        {"claim": "The vaccine causes autism.", "ref": [WAKEFIELD, PNAS]},
        {"claim": "Collagen cross-linking stiffens tissues."},
        {"claim": "Cross-linking improves tissues.", "ref": PNAS},
    ]
    async with mcp_session(doiget_env) as session:
        result = await session.call_tool(
            "doiget_check_claims", {"items": items}, progress_callback=on_progress
        )
        health = await call(session, "doiget_health")
    reply = result.structured_content
    assert reply is not None and reply["ok"] is True and not result.is_error
    first, missing, down = reply["results"]
    assert [(w["ref"], w["basis"], w["addressed"]) for w in first["works"]] == [
        (WAKEFIELD, "unavailable", "unavailable"), (PNAS, "unavailable", "unavailable"),
    ]  # fmt: skip
    assert "no abstract in the record" in first["works"][0]["basis_note"]
    assert "crossref failed" in first["works"][1]["basis_note"]
    assert missing["error"]["code"] == "INVALID_REF" and "works" not in missing
    assert down["works"][0]["addressed"] == "unavailable"
    assert sorted(p for p, _, _ in seen) == [1.0, 2.0, 3.0]
    assert all(total == 3.0 for _, total, _ in seen)
    assert health["ok"] is True


async def test_a_stored_paper_is_weighed_by_the_engine_with_pages(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    pytest.importorskip("doiget.claims.evidence")
    store_paper(Path(doiget_env["DOIGET_STORE_ROOT"]), "10.1234/jose", JOSE_PDF)
    async with mcp_session(doiget_env) as session:
        reply = await call(
            session,
            "doiget_check_claims",
            {"items": [{"claim": JOSE_SENTENCE, "ref": "10.1234/jose"}]},
        )
    [work] = reply["results"][0]["works"]
    assert work["basis"] == "full_text" and work["addressed"] in ("addressed", "partly")
    assert work["evidence"] and work["evidence"][0]["page"] == 3
    assert upstream.requests == []


def test_the_command_line_prints_what_the_tool_returns(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    _route(upstream)
    ran = doiget("claim", "The vaccine causes autism.", WAKEFIELD, "--no-fetch", "--json",
                 env=doiget_env)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    [work] = json.loads(ran.stdout)["results"][0]["works"]
    assert (work["ref"], work["basis"]) == (WAKEFIELD, "unavailable")
    shown = doiget("claim", "The vaccine causes autism.", WAKEFIELD, "--no-fetch", env=doiget_env)
    said = " ".join(shown.stdout.split())  # as printed, wrapped to the terminal
    assert shown.returncode == 0 and said.startswith(f"unavailable {WAKEFIELD}")
    assert "no abstract in the record" in said
    for bad in (["claim", "A sentence."], ["claim", "S.", PNAS, WAKEFIELD, "--text", "-"]):
        refused = doiget(*bad, "--json", env=doiget_env, stdin="text")
        assert refused.returncode != 0
        assert json.loads(refused.stdout)["error"]["code"] == "INVALID_REF"
    too_long = tmp_path / "long.txt"
    too_long.write_text("x" * 200_001)
    refused = doiget("claim", "S.", "--text", str(too_long), "--json", env=doiget_env)
    assert json.loads(refused.stdout)["error"]["code"] == "INVALID_REF"


def test_the_command_line_weighs_inline_text_from_stdin(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    pytest.importorskip("doiget.claims.evidence")
    text = "We studied 40 mice. Mortality fell by 14 % in the treated group."
    ran = doiget("claim", "Mortality fell by 14 %.", "--text", "-", "--json", env=doiget_env,
                 stdin=text)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    [work] = json.loads(ran.stdout)["results"][0]["works"]
    assert work["basis"] == "inline" and work["evidence"]
    best = work["evidence"][0]
    assert " ".join(text[best["start"] : best["end"]].split()) == " ".join(best["text"].split())
    assert upstream.requests == []
