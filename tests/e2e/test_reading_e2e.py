"""Reading a fetched paper and checking quotations, over MCP and the command line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcputil import call, mcp_session

from cliutil import doiget
from papersutil import NATURE, PNAS, route_nature, route_pnas
from replay import ReplayUpstream

# A sentence of the OpenQuestion paper (the replay's PDF for NATURE), broken over two
# lines on page 3, and the same with one word changed.
ON_PAGE_3 = "All code blocks are removed and the interactivity of the charts is maintained."
CHANGED = "All code blocks are removed and the interactivity of the tables is maintained."


def _stock(upstream: ReplayUpstream, env: dict[str, str]) -> None:
    """One stored paper with a PDF and one without."""
    route_nature(upstream)
    route_pnas(upstream)
    assert doiget("fetch", NATURE, env=env).returncode == 0
    assert doiget("metadata", PNAS, env=env).returncode == 0


async def _read_through(session: Any, **scope: Any) -> str:
    text, cursor = "", None
    while True:
        arguments = {"ref": NATURE, "max_chars": 500, **scope}
        if cursor:
            arguments["cursor"] = cursor
        piece = await call(session, "doiget_read_paper", arguments)
        assert piece["ok"] and len(piece["text"]) <= 500 and piece["pages"], piece
        text += piece["text"]
        cursor = piece["cursor"]
        if cursor is None:
            return text


async def test_an_agent_reads_a_fetched_paper_and_checks_a_quote(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _stock(upstream, doiget_env)
    async with mcp_session(doiget_env) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name in ("doiget_read_paper", "doiget_check_quote"):
            hints = tools[name].annotations
            assert hints is not None and hints.read_only_hint and hints.open_world_hint is False
        outline = await call(session, "doiget_read_paper", {"ref": NATURE})
        assert outline["page_count"] == 4 and outline["references"] == 6
        titles = {s["title"]: s for s in outline["sections"]}
        assert titles["Statement of need"]["pages"] == [1, 3]
        assert [f["label"] for f in outline["figures"]] == ["Figure 1"]
        assert "integrity" not in outline and "text" not in outline

        whole = "".join(
            [
                await _read_through(session, section=s["number"])
                for s in outline["sections"]
                if s["level"] == 1
            ]
        )
        assert whole == await _read_through(session, pages="1-4")
        by_key = await call(session, "doiget_read_paper", {"ref": "doi_10.1038_nature12373"})
        assert by_key == outline

        found = await call(session, "doiget_check_quote", {"ref": NATURE, "quote": ON_PAGE_3})
        assert found["found"] and found["page"] == 3 and found["similarity"] == 1.0
        section = found["section"]
        assert section["title"] == "Interactive “code-free” HTML reports"
        piece = await call(
            session, "doiget_read_paper", {"ref": NATURE, "section": section["number"]}
        )
        assert "interactivity of the charts is\nmaintained." in piece["text"]

        near = await call(session, "doiget_check_quote", {"ref": NATURE, "quote": CHANGED})
        assert not near["found"] and near["similarity"] > 0.85 and near["page"] == 3

        no_pdf = await call(session, "doiget_read_paper", {"ref": PNAS})
        assert no_pdf["error"]["code"] == "NOT_FOUND"
        assert "doiget_fetch_paper" in no_pdf["error"]["message"]
        unknown = await call(session, "doiget_read_paper", {"ref": NATURE, "section": "Methods"})
        assert unknown["error"]["code"] == "INVALID_REF"
        assert "Statement of need" in unknown["error"]["message"]
        bad_pages = await call(session, "doiget_read_paper", {"ref": NATURE, "pages": "two"})
        assert bad_pages["error"]["code"] == "INVALID_REF"


def test_the_commands_print_what_the_tools_return(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _stock(upstream, doiget_env)
    outline = doiget("read", NATURE, "--json", env=doiget_env)
    assert outline.returncode == 0, outline.stderr
    shown = json.loads(outline.stdout)
    assert shown["references"] == 6 and shown["sections"][0]["number"] == "0"

    people = doiget("read", NATURE, "--section", "Summary", env=doiget_env)
    assert people.returncode == 0 and people.stdout.startswith("Summary\n")

    found = doiget("quote", NATURE, ON_PAGE_3, "--json", env=doiget_env)
    assert found.returncode == 0
    assert json.loads(found.stdout)["page"] == 3
    near = doiget("quote", NATURE, CHANGED, env=doiget_env)
    assert near.returncode == 1 and "not found" in near.stdout

    missing = doiget("read", PNAS, env=doiget_env)
    assert missing.returncode != 0 and "`doiget fetch`" in missing.stderr


async def test_the_same_answers_over_both_faces(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _stock(upstream, doiget_env)
    asks = [
        ("doiget_read_paper", {"ref": NATURE, "pages": "2", "max_chars": 900},
         ["read", NATURE, "--pages", "2", "--max-chars", "900"]),
        ("doiget_check_quote", {"ref": NATURE, "quote": CHANGED}, ["quote", NATURE, CHANGED]),
    ]  # fmt: skip
    async with mcp_session(doiget_env) as session:
        for tool, arguments, argv in asks:
            over_mcp = await call(session, tool, arguments)
            printed = doiget(*argv, "--json", env=doiget_env)
            assert json.loads(printed.stdout) == over_mcp


@pytest.mark.parametrize("apart", ["0", "1"], ids=["threads", "worker processes"])
async def test_a_quote_is_checked_in_a_project_without_a_ref(
    upstream: ReplayUpstream, doiget_env: dict[str, str], apart: str
) -> None:
    _stock(upstream, doiget_env)
    indexed = doiget("index", NATURE, env=doiget_env)
    assert indexed.returncode == 0, indexed.stderr
    async with mcp_session({**doiget_env, "DOIGET_SEARCH_PROCESSES": apart}) as session:
        found = await call(session, "doiget_check_quote", {"quote": ON_PAGE_3})
        near = await call(session, "doiget_check_quote", {"quote": CHANGED})
        unknown = await call(session, "doiget_check_quote", {"quote": "x", "project": "no/such"})
    assert found["found"] and found["project"] == "doiget/papers"
    assert found["doc_id"] == NATURE and found["page"] == 3 and found["ref"] == NATURE
    assert found["pdf_origin"] == {
        "kind": "fetched",
        "source": "oa-publisher",
        "host": "europepmc.org",
    }
    assert not near["found"] and near["similarity"] > 0.85 and near["doc_id"] == NATURE
    assert unknown["error"]["code"] == "INVALID_PROJECT"
