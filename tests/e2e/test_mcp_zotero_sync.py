"""A second agent session over MCP, with the official client: it syncs the researcher's
Zotero library (the Web API, impersonated on the replay upstream), finds a passage of
a synced PDF with ``query_hybrid`` under the researcher's own citation key, reads the
item's annotations, and after the researcher changes the library a second sync moves
only what changed."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcputil import call
from zoterosyncutil import SENTENCE, Library, Served, build_library, route_works, serve

from cliutil import clean_env
from replay import ReplayUpstream

PROJECT = "doiget/papers"


@pytest.fixture
def served(tmp_path: Path, upstream: ReplayUpstream) -> Iterator[tuple[Served, Library]]:
    library = serve("web", tmp_path / "zotero-files", upstream)
    made = build_library(library.fake, tmp_path / "made")
    route_works(upstream)
    yield library, made
    library.stop()


@asynccontextmanager
async def _session(env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", "zotero,library"],
        env=clean_env(env),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_a_second_session_sees_the_synced_library_and_a_resync_moves_only_changes(
    doiget_env: dict[str, str], served: tuple[Served, Library]
) -> None:
    zotero, lib = served
    env = {**doiget_env, **zotero.env}
    # The researcher highlights a sentence in the PDF before the agent starts.
    zotero.fake.add_annotation(
        lib.pnas_pdf, "highlight", text=SENTENCE, comment="the key result", page="3"
    )

    async with _session(env) as session:
        first = await call(session, "doiget_zotero_sync", {})
    assert first["counts"]["new"] >= 3 and first["counts"]["pdfs_added"] >= 1
    assert first["interrupted"] is False

    # The researcher edits one item and adds another highlight meanwhile.
    zotero.fake.change(lib.attention, tags=[{"tag": "transformers"}, {"tag": "to-cite"}])

    async with _session(env) as session:
        again = await call(session, "doiget_zotero_sync", {})
        found = await call(
            session, "query_hybrid", {"project": PROJECT, "query": SENTENCE, "top_k": 3}
        )
        tagged = await call(
            session,
            "query_hybrid",
            {"project": PROJECT, "query": SENTENCE, "filters": {"tags": "cartilage"}},
        )
        item = await call(session, "doiget_zotero_search", {"key": lib.pnas})

    # Only the changed item moved: one listing of changes, one read of it, deletions.
    assert again["from_version"] == first["to_version"]
    assert again["counts"]["updated"] == 1 and again["counts"]["new"] == 0
    assert [row["key"] for row in again["results"]] == [lib.attention]
    assert again["requests"] <= 3
    # The synced PDF's passage, under the researcher's own citation key and tags.
    top = found["items"][0]
    assert SENTENCE in top["render_text"] and top["citekey"] == "makris2014hypoxia"
    assert tagged["items"] and tagged["items"][0]["citekey"] == "makris2014hypoxia"
    # The researcher's highlight on that PDF, with its page label.
    (work,) = item["items"]
    assert work["entry"] == "10.1073/pnas.1414271111"  # the doiget entry it became
    marks = [mark for pdf in work["attachments"] for mark in pdf["annotations"]]
    assert any(
        mark["type"] == "highlight" and mark["text"] == SENTENCE and mark["page_label"] == "3"
        for mark in marks
    )
