"""Bad and hostile files in the store, through the real program: the CLI and ``doiget serve``.

See tests/integration/storeedges.py for what the store holds. Every listing goes on
without the unreadable entries and says so; nothing outside the store is returned.
"""

from __future__ import annotations

import base64
import json

import pytest
from mcp.shared.exceptions import MCPError
from mcputil import call, mcp_session

from cliutil import doiget
from storeedges import (
    BAD_METADATA,
    BAD_PDFS,
    GOOD_DOI,
    GOOD_KEY,
    SECRET,
    StockedStore,
    doi,
    key,
)


def _json(args: tuple[str, ...], env: dict[str, str], status: int = 0) -> dict:
    done = doiget(*args, "--json", env=env)
    assert done.returncode == status, (args, done.stdout, done.stderr)
    assert SECRET.decode() not in done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_cli_lists_around_unreadable_files_and_refuses_what_leaves_the_store(
    stocked_env: dict[str, str],
) -> None:
    found = _json(("search", "thermometry"), stocked_env)
    assert [row["ref"] for row in found["results"]] == [GOOD_DOI]
    recent = _json(("recent", "-n", "100"), stocked_env)
    assert GOOD_DOI in {row["ref"] for row in recent["results"]}
    assert not {doi(kind) for kind in BAD_METADATA} & {row["ref"] for row in recent["results"]}
    warned = doiget("recent", env=stocked_env).stderr
    assert f"{len(BAD_METADATA)} metadata file(s) cannot be read" in warned
    assert _json(("reindex",), stocked_env)["ok"] is True

    health = _json(("health",), stocked_env)
    assert health["unreadable_entries"] == len(BAD_METADATA)
    assert {line.split(":", 1)[0] for line in health["unreadable_files"]} == {
        f"{key(kind)}.toml" for kind in BAD_METADATA
    }

    for kind in BAD_METADATA:
        done = doiget("info", doi(kind), env=stocked_env)
        assert done.returncode == 4, (kind, done.stderr)
        assert "STORE_ERROR" in done.stderr and f"{key(kind)}.toml" in done.stderr
    for kind in BAD_PDFS:
        done = doiget("pdf-path", doi(kind), env=stocked_env)
        assert done.returncode == 4, (kind, done.stderr)
        assert "STORE_ERROR" in done.stderr and f"{key(kind)}.pdf" in done.stderr
        assert _json(("info", doi(kind)), stocked_env)["pdf_path"] is None
    assert doiget("pdf-path", GOOD_DOI, env=stocked_env).stdout.strip().endswith(f"{GOOD_KEY}.pdf")


def test_cli_index_all_indexes_only_the_pdf_doiget_serves(stocked_env: dict[str, str]) -> None:
    report = _json(("index", "--all"), stocked_env)
    status = {row["doc_id"]: (row["status"], row["reason"]) for row in report["documents"]}
    assert status.pop(GOOD_DOI) == ("indexed", None)
    assert status == {doi(kind): ("skipped", "unreadable") for kind in BAD_PDFS}


async def test_mcp_resources_and_tools_go_on_past_bad_files(
    stocked_env: dict[str, str], stocked: StockedStore
) -> None:
    prefix = "doiget://paper/"
    async with mcp_session(stocked_env, toolsets="papers,library") as session:
        listed = {str(item.uri) for item in (await session.list_resources()).resources}
        good = await session.read_resource(f"{prefix}{GOOD_KEY}/pdf")
        refusals = {}
        for kind in BAD_PDFS:
            with pytest.raises(MCPError) as raised:
                await session.read_resource(f"{prefix}{key(kind)}/pdf")
            refusals[kind] = raised.value.error
        for kind in BAD_METADATA:
            with pytest.raises(MCPError) as raised:
                await session.read_resource(f"{prefix}{key(kind)}")
            refusals[kind] = raised.value.error
        found = await call(session, "doiget_search_local", {"query": "thermometry"})
        recent = await call(session, "doiget_list_recent", {"limit": 100})
        health = await call(session, "doiget_health")
        result = await session.call_tool(
            "index_papers",
            {"project": "doiget/papers", "refs": [GOOD_DOI, doi("pdflinkout"), doi("notutf8")]},
        )
    assert f"{prefix}{GOOD_KEY}/pdf" in listed
    assert not any(f"{key(kind)}/pdf" in uri for kind in BAD_PDFS for uri in listed)
    assert not any(key(kind) in uri for kind in BAD_METADATA for uri in listed)
    assert base64.b64decode(good.contents[0].blob) == stocked.good_pdf  # type: ignore[union-attr]
    for kind, error in refusals.items():
        assert error.message.startswith("STORE_ERROR: "), kind
        assert error.data["code"] == "STORE_ERROR", kind
        assert SECRET.decode() not in error.message
    assert [hit["ref"] for hit in found["results"]] == [GOOD_DOI]
    assert GOOD_DOI in {hit["ref"] for hit in recent["results"]}
    assert health["unreadable_entries"] == len(BAD_METADATA)
    report = result.structured_content
    assert report is not None and not result.is_error
    status = {row["doc_id"]: (row["status"], row["reason"]) for row in report["documents"]}
    assert status == {
        GOOD_DOI: ("indexed", None),
        doi("pdflinkout"): ("skipped", "unreadable"),
        doi("notutf8"): ("skipped", "unreadable"),
    }
