"""The zotero toolset over MCP with the official client: an agent searches the
researcher's library and reads an item, and a write under ``DOIGET_ZOTERO_WRITE=ask``
is put to the user through elicitation (accepted, declined, or a client that cannot
ask); the resources; and the command line's terminal approval."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from importutil import ATTENTION, PNAS, PNAS_TITLE, route_library
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcputil import call

from zoterofake import WRITE_KEY, ZoteroWorld

from cliutil import clean_env, doiget
from replay import ReplayUpstream

Asked = list[str]
# A sentence on page 2 of the PDF the replayed arXiv serves for 1706.03762.
PASSAGE = "charting can occur across different data sets in the same report"


@asynccontextmanager
async def _session(
    env: dict[str, str],
    answer: str | None = None,
    asked: Asked | None = None,
    toolsets: str = "zotero",
) -> AsyncIterator[ClientSession]:
    """A session with ``doiget serve --toolsets <toolsets>``; with ``answer`` the client
    declares elicitation and answers each question with that action."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        content = {"approve": True} if answer == "accept" else None
        return types.ElicitResult(action=answer or "cancel", content=content)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", toolsets],
        env=clean_env(env),
    )
    callback = {"elicitation_callback": elicit} if answer is not None else {}
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, **callback) as session,
    ):
        await session.initialize()
        yield session


def _env(doiget_env: dict[str, str], world: ZoteroWorld, write: str) -> dict[str, str]:
    return {**doiget_env, **world.env, "DOIGET_ZOTERO_WRITE": write}


async def test_an_agent_searches_the_library_and_reads_an_item_with_its_annotations(
    doiget_env: dict[str, str], zotero_web: ZoteroWorld
) -> None:
    async with _session(_env(doiget_env, zotero_web, "off")) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert {"doiget_zotero_search", "doiget_zotero_add"} <= listed
        found = await call(session, "doiget_zotero_search", {"q": "Quantenmechanik"})
        assert [item["key"] for item in found["items"]] == [zotero_web.seeded.article]
        assert found["items"][0]["citation_key"] == "schrodinger1926quant"
        one = await call(session, "doiget_zotero_search", {"key": zotero_web.seeded.article})
        (item,) = one["items"]
        assert item["notes"][0]["text"].startswith("Reading note: the wave equation")
        (pdf,) = item["attachments"]
        marks = {mark["type"]: mark for mark in pdf["annotations"]}
        assert set(marks) == {"highlight", "underline", "note", "image", "ink", "text"}
        assert marks["highlight"]["page_label"] == "2"
        assert marks["highlight"]["text"].endswith("«ünïcode»")
        assert marks["highlight"]["color"].startswith("#")
        tree = await call(session, "doiget_zotero_search", {})
        assert {"Reading", "Méthodes"} <= {c["name"] for c in tree["collections"]}
        resource = await session.read_resource(f"zotero://items/{zotero_web.seeded.preprint}")
        assert "vaswani2017attention" in resource.contents[0].text  # type: ignore[union-attr]
        listed_uris = [str(r.uri) for r in (await session.list_resources()).resources]
        assert listed_uris == ["zotero://collections"]
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["zotero://items/{key}"]
        tree_text = (await session.read_resource("zotero://collections")).contents[0]
        assert "Méthodes" in tree_text.text  # type: ignore[union-attr]
        refused = await call(
            session, "doiget_zotero_add",
            {"action": "tags", "target": zotero_web.seeded.article, "tags": ["x"]},
        )  # fmt: skip
        assert refused["error"]["code"] == "CAPABILITY_DENIED"
        assert "DOIGET_ZOTERO_WRITE=ask" in refused["error"]["message"]


@pytest.mark.parametrize(
    ("answer", "written"),
    [("accept", True), ("decline", False), ("cancel", False), (None, False)],
    ids=["accepted", "declined", "dismissed", "client cannot ask"],
)
async def test_a_write_under_ask_is_made_only_when_the_user_accepts(
    doiget_env: dict[str, str],
    upstream: ReplayUpstream,
    zotero_web: ZoteroWorld,
    answer: str | None,
    written: bool,
) -> None:
    route_library(upstream)
    asked: Asked = []
    env = _env(doiget_env, zotero_web, "ask")
    async with _session(env, answer, asked) as session:
        result = await call(
            session, "doiget_zotero_add",
            {"action": "work", "target": PNAS, "collection": "To cite", "tags": ["doiget"]},
        )  # fmt: skip
    titled = [i for i in zotero_web.fake.items.values() if i.get("title") == PNAS_TITLE]
    assert bool(titled) is written
    if answer is not None:
        (question,) = asked
        assert "To cite (new)" in question and PNAS_TITLE in question
    if written:
        assert result["created"] is True and result["key"] == titled[0]["key"]
    else:
        assert result["error"]["code"] == "CAPABILITY_DENIED"
        assert not [r for r in zotero_web.fake.requests if r.method == "POST"]


def test_the_command_line_asks_on_the_terminal_unless_yes(
    doiget_env: dict[str, str], upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(doiget_env, zotero_web, "ask")
    add = ("zotero", "add", PNAS, "--collection", "Reading", "--tag", "from-cli")
    declined = doiget(*add, env=env, stdin="n\n")
    assert declined.returncode == 3
    assert "Write this to Zotero?" in declined.stderr and "did not approve" in declined.stderr
    assert "collection: Reading" in declined.stderr and PNAS_TITLE in declined.stderr
    assert not [i for i in zotero_web.fake.items.values() if i.get("title") == PNAS_TITLE]
    approved = doiget("--json", *add, "--yes", env=env)
    assert approved.returncode == 0, approved.stderr
    result = json.loads(approved.stdout)
    assert result["created"] is True and result["tags_added"] == ["from-cli"]
    item = zotero_web.fake.items[result["key"]]
    assert item["title"] == PNAS_TITLE and item["collections"] == [zotero_web.seeded.reading]
    tagged = doiget("zotero", "tag", zotero_web.seeded.article, "x", env=env, stdin="")
    assert tagged.returncode == 3 and "did not approve" in tagged.stderr  # no answer: no
    assert WRITE_KEY not in approved.stdout + approved.stderr + declined.stderr


def test_health_and_capabilities_say_which_library_and_whether_writes_are_on(
    doiget_env: dict[str, str], zotero_web: ZoteroWorld
) -> None:
    env = _env(doiget_env, zotero_web, "ask")
    health = doiget("--json", "health", env=env)
    zotero = json.loads(health.stdout)["zotero"]
    assert zotero["reachable"] is True, health.stdout + health.stderr
    assert zotero["library"] == f"users/{zotero_web.fake.library_id}"
    assert zotero["writes"] == "ask"
    capabilities = doiget("--json", "capabilities", env=env)
    assert json.loads(capabilities.stdout)["zotero"] == {
        "configured": True, "library": zotero["library"], "writes": "ask",
    }  # fmt: skip
    assert WRITE_KEY not in health.stdout + capabilities.stdout


def test_health_says_when_the_desktop_app_does_not_answer(doiget_env: dict[str, str]) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**doiget_env, "DOIGET_ZOTERO_LOCAL": f"http://127.0.0.1:{port}"}
    report = json.loads(doiget("--json", "health", env=env).stdout)
    assert report["ok"] is True  # doiget works without Zotero
    zotero = report["zotero"]
    assert zotero["reachable"] is False and zotero["reason"]
    assert zotero["library"] == f"the Zotero desktop app (http://127.0.0.1:{port})"


async def test_an_agent_verifies_fetches_and_files_a_work_with_a_quoted_passage(
    doiget_env: dict[str, str], upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    served = route_library(upstream)
    zotero_web.fake.delete(zotero_web.seeded.preprint)  # the researcher has not got it yet
    ref = f"arXiv:{ATTENTION}"
    asked: Asked = []
    env = _env(doiget_env, zotero_web, "ask")
    async with _session(env, "accept", asked, toolsets="papers,zotero") as session:
        checked = await call(session, "doiget_verify_references", {"references": [ref]})
        assert checked["results"][0]["verdict"] == "verified"
        await call(session, "doiget_fetch_paper", {"ref": ref})
        quote = await call(session, "doiget_check_quote", {"ref": ref, "quote": PASSAGE})
        assert quote["found"] is True
        note = f"Why we cite it:\n> {PASSAGE} (p. {quote['page']})"
        added = await call(
            session, "doiget_zotero_add",
            {"action": "work", "target": ref, "collection": "To cite", "note": note},
        )  # fmt: skip
    (question,) = asked
    assert "To cite (new)" in question and "a note" in question
    assert added["created"] is True
    item = zotero_web.fake.items[added["key"]]
    assert item["itemType"] == "preprint" and item["archiveID"] == ref
    assert zotero_web.fake.files[added["attachment"]] == served
    # The library's copy was uploaded: arXiv was asked for the PDF once, by the fetch.
    assert len([r for r in upstream.requests_to("arxiv.org") if "/pdf/" in r.path]) == 1
    html = zotero_web.fake.items[added["note"]]["note"]
    assert f"<blockquote><p>{PASSAGE} (p. {quote['page']})</p></blockquote>" in html
