"""Writing into the researcher's Zotero through the fake library (Web API on the replay
upstream, the desktop app on a loopback port): only verified works, each refusal with
its reason, no duplicates, collections made, PDFs uploaded, notes and tags, conflicts
re-read, read-only keys, the desktop app's connector, approval, provenance."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from importutil import (
    ATTENTION,
    PNAS,
    PNAS_TITLE,
    fabricated,
    route_library,
    unreachable,
    wrong_year,
)
from integrityutil import WAKEFIELD, route_integrity

from doiget.errors import DoigetError, ErrorCode
from doiget.runtime import load_runtime
from doiget.zotero.contracts import Written, ZoteroAdd
from doiget.zotero.service import ZoteroCore
from zoterofake import READ_KEY, WRITE_KEY, ZoteroWorld

from replay import ReplayUpstream

# Requests spaced by no gap: a reference is verified through DBLP and arXiv before it is
# written, and what is written or refused is the subject (see tests/pacing.py).
pytestmark = pytest.mark.usefixtures("unpaced")

Asked = list[tuple[str, dict[str, Any]]]


def _env(tmp_path: Path, upstream: ReplayUpstream, world: ZoteroWorld, **more: str) -> dict:
    return {
        **upstream.isolated_env(tmp_path),
        "DOIGET_EMAIL": "tests@example.org",
        **world.env,
        **more,
    }


def _add(
    env: dict[str, str], asked: Asked | None = None, answer: bool | None = True, **fields: Any
) -> Written:
    """One write through the core the faces use; ``asked`` collects what was put to the
    researcher, who answers ``answer``."""

    async def confirm(message: str, details: Mapping[str, Any]) -> bool | None:
        if asked is not None:
            asked.append((message, dict(details)))
        return answer

    async def run() -> Written:
        runtime = load_runtime(env)
        core = ZoteroCore(runtime)
        try:
            return await core.add(ZoteroAdd.model_validate(fields), confirm)
        finally:
            await core.aclose()
            await runtime.aclose()

    return anyio.run(run)


def _refused(env: dict[str, str], **fields: Any) -> DoigetError:
    with pytest.raises(DoigetError) as caught:
        _add(env, **fields)
    return caught.value


def _writes(world: ZoteroWorld) -> list[str]:
    return [f"{r.method} {r.path}" for r in world.fake.requests if r.method != "GET"]


def _rows(env: dict[str, str]) -> list[dict[str, Any]]:
    lines = Path(env["DOIGET_LOG_PATH"]).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _items_titled(world: ZoteroWorld, title: str) -> list[dict[str, Any]]:
    return [item for item in world.fake.items.values() if item.get("title") == title]


def test_a_verified_work_goes_into_a_collection_made_for_it(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web)
    written = _add(env, action="work", target=PNAS, collection="Tissue engineering")
    assert written.created is True and written.collection_created is True
    (item,) = _items_titled(zotero_web, PNAS_TITLE)
    assert item["key"] == written.key
    assert item["itemType"] == "journalArticle"
    assert item["DOI"].lower() == PNAS
    assert item["publicationTitle"] == "Proceedings of the National Academy of Sciences"
    assert item["creators"][0] == {
        "creatorType": "author", "lastName": "Makris", "firstName": "Eleftherios A.",
    }  # fmt: skip
    (collection,) = [
        key for key, c in zotero_web.fake.collections.items() if c["name"] == "Tissue engineering"
    ]
    assert item["collections"] == [collection]
    rows = [row for row in _rows(env) if row["event"] == "zotero_write"]
    assert [row["detail"].split(": ", 1)[1].split(" ")[:2] for row in rows][:2] == [
        ["create", "collection"], ["create", "item"],
    ]  # fmt: skip
    assert all(row["detail"].startswith(f"users/{zotero_web.fake.library_id}:") for row in rows)
    assert WRITE_KEY not in Path(env["DOIGET_LOG_PATH"]).read_text("utf-8")


def test_an_arxiv_work_is_a_preprint_with_its_pdf_uploaded(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    served = route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web)
    # The seeded library holds it (its arXiv id in archiveID): found, not added.
    held = _add(env, action="work", target=f"arXiv:{ATTENTION}", collection="Reading")
    assert (held.created, held.key) == (False, zotero_web.seeded.preprint)
    zotero_web.fake.delete(zotero_web.seeded.preprint)
    written = _add(env, action="work", target=f"arXiv:{ATTENTION}", collection="Reading")
    assert written.created is True and written.collection == "Reading"
    assert written.collection_created is None  # the seeded one
    item = zotero_web.fake.items[written.key or ""]
    assert item["itemType"] == "preprint"
    assert item["archiveID"] == f"arXiv:{ATTENTION}"
    assert item["collections"] == [zotero_web.seeded.reading]
    assert written.attachment is not None
    assert zotero_web.fake.items[written.attachment]["parentItem"] == written.key
    assert zotero_web.fake.files[written.attachment] == served


@pytest.mark.parametrize(
    ("reference", "code", "said"),
    [
        (fabricated(), ErrorCode.NOT_FOUND, "not found"),
        (unreachable(), ErrorCode.INVALID_REF, "uncertain"),
        (wrong_year(), ErrorCode.INVALID_REF, "takeCorrection"),
    ],
)
def test_a_reference_that_is_not_verified_is_refused_with_the_reason(
    tmp_path: Path,
    upstream: ReplayUpstream,
    zotero_web: ZoteroWorld,
    reference: str,
    code: ErrorCode,
    said: str,
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web)
    asked: Asked = []
    error = _refused(env, asked=asked, action="work", target=reference, collection="Reading")
    assert error.code is code
    assert said in error.message
    assert error.details is not None and error.details["verdict"] in error.message.replace(" ", "_")
    assert asked == []
    assert _writes(zotero_web) == []


def test_a_miscited_work_is_written_as_its_record_has_it_when_the_correction_is_taken(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web)
    written = _add(env, action="work", target=wrong_year(), takeCorrection=True)
    assert written.created is True
    assert [p.kind for p in written.problems or []] == ["year_differs"]
    assert zotero_web.fake.items[written.key or ""]["date"].startswith("2014")


def test_a_retracted_work_is_never_written(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_integrity(upstream)
    env = _env(tmp_path, upstream, zotero_web)
    error = _refused(env, action="work", target=WAKEFIELD, takeCorrection=True)
    assert error.code is ErrorCode.INVALID_REF and "retracted" in error.message
    assert _writes(zotero_web) == []


@pytest.mark.parametrize(
    "held",
    [
        {"itemType": "journalArticle", "DOI": PNAS.upper(), "title": "My own title"},
        {"itemType": "report", "extra": f"DOI: {PNAS}", "title": "Makris 2014"},
        {"itemType": "journalArticle", "title": PNAS_TITLE.upper() + "."},
    ],
    ids=["doi field", "doi in extra", "title only"],
)
def test_a_work_the_library_holds_is_found_not_added_again(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld, held: dict[str, Any]
) -> None:
    route_library(upstream)
    key = zotero_web.fake.add_item({**held, "tags": [{"tag": "mine"}]})
    count = len(zotero_web.fake.items)
    env = _env(tmp_path, upstream, zotero_web)
    written = _add(env, action="work", target=PNAS, collection="Elsewhere", tags=["checked"])
    assert (written.created, written.key) == (False, key)
    assert len(zotero_web.fake.items) == count
    assert "Elsewhere" not in [c["name"] for c in zotero_web.fake.collections.values()]
    # What was asked for beside it lands on the item the researcher has, their tag kept.
    assert zotero_web.fake.items[key]["tags"] == [{"tag": "mine"}, {"tag": "checked"}]
    assert zotero_web.fake.items[key].get("title") == held["title"]


def test_a_note_quotes_a_passage_with_its_page_as_escaped_html(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    env = _env(tmp_path, upstream, zotero_web)
    article = zotero_web.seeded.article
    text = "Key result <b>here</b>:\n> The wave equation holds for every state. (p. 362)"
    written = _add(env, action="note", target=article, note=text)
    note = zotero_web.fake.items[written.note or ""]
    assert note["itemType"] == "note" and note["parentItem"] == article
    assert (
        "<blockquote><p>The wave equation holds for every state. (p. 362)</p></blockquote>"
        in (note["note"])
    )
    assert "&lt;b&gt;here&lt;/b&gt;" in note["note"] and "<b>" not in note["note"]
    (row,) = [row for row in _rows(env) if row["event"] == "zotero_write"]
    assert row["ref"] == f"zotero:users/{zotero_web.fake.library_id}:{article}"
    assert row["detail"].endswith(f"create note on {article}") and row["result"] == "ok"


def test_tags_are_merged_into_the_items_own_and_a_conflict_is_read_again(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    env = _env(tmp_path, upstream, zotero_web)
    article = zotero_web.seeded.article
    before = dict(zotero_web.fake.items[article])
    zotero_web.fake.switches.conflicts = 1
    written = _add(env, action="tags", target=article, tags=["quantum", "cited", "cited"])
    assert written.tags_added == ["cited"]
    item = zotero_web.fake.items[article]
    assert item["tags"] == [*before["tags"], {"tag": "cited"}]
    assert {k: v for k, v in item.items() if k not in ("tags", "version", "dateModified")} == {
        k: v for k, v in before.items() if k not in ("tags", "version", "dateModified")
    }
    patches = [r for r in zotero_web.fake.requests if r.method in ("PATCH", "PUT")]
    assert len(patches) == 2  # the 412, then the change sent again at the new version
    assert all(set(r.json()) <= {"tags", "version"} for r in patches)


def test_tags_the_item_has_already_write_nothing(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    env = _env(tmp_path, upstream, zotero_web)
    written = _add(env, action="tags", target=zotero_web.seeded.article, tags=["to-read"])
    assert written.tags_added is None and written.skipped == ["the item has these tags already"]
    assert _writes(zotero_web) == []


def test_a_key_that_may_only_read_is_refused_before_anything_is_asked(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    env = _env(tmp_path, upstream, zotero_web, DOIGET_ZOTERO_API_KEY=READ_KEY)
    asked: Asked = []
    for fields in (
        {"action": "note", "target": zotero_web.seeded.article, "note": "n"},
        {"action": "tags", "target": zotero_web.seeded.article, "tags": ["t"]},
        {"action": "work", "target": PNAS},
    ):
        error = _refused(env, asked=asked, **fields)
        assert error.code is ErrorCode.CAPABILITY_DENIED
        assert "write access" in error.message and READ_KEY not in error.message
    assert asked == [] and _writes(zotero_web) == []


@pytest.mark.parametrize(
    ("mode", "answer", "said"),
    [("off", True, "DOIGET_ZOTERO_WRITE=ask"), ("ask", False, "did not approve"),
     ("ask", None, "cannot ask")],
)  # fmt: skip
def test_a_write_not_approved_is_refused_and_nothing_is_written(
    tmp_path: Path,
    upstream: ReplayUpstream,
    zotero_web: ZoteroWorld,
    mode: str,
    answer: bool | None,
    said: str,
) -> None:
    env = _env(tmp_path, upstream, zotero_web, DOIGET_ZOTERO_WRITE=mode)
    error = _refused(
        env, answer=answer, action="tags", target=zotero_web.seeded.article, tags=["x"]
    )
    assert error.code is ErrorCode.CAPABILITY_DENIED and said in error.message
    assert _writes(zotero_web) == []
    if mode == "off":  # refused before Zotero is even asked anything
        assert zotero_web.fake.requests == []


def test_ask_puts_what_will_be_written_and_where_to_the_researcher(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web, DOIGET_ZOTERO_WRITE="ask")
    asked: Asked = []
    _add(env, asked=asked, action="work", target=PNAS, collection="Méthodes", note="Read.")
    ((message, details),) = asked
    assert "Méthodes" in message and PNAS_TITLE in message and "a note" in message
    assert details["collection"] == "Méthodes" and details["identifier"] == PNAS


def test_a_group_library_is_written_like_a_users(
    tmp_path: Path, upstream: ReplayUpstream, zotero_group: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_group)
    written = _add(env, action="work", target=PNAS)
    assert written.library == f"groups/{zotero_group.fake.library_id}"
    assert _items_titled(zotero_group, PNAS_TITLE)[0]["key"] == written.key


def test_the_desktop_app_saves_a_new_work_through_its_connector(
    tmp_path: Path, upstream: ReplayUpstream, zotero_local: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_local, DOIGET_ZOTERO_WRITE="on")
    written = _add(
        env, action="work", target=PNAS, collection="Reading", note="> quoted (p. 2)",
        tags=["from-doiget"],
    )  # fmt: skip
    assert written.created is True and written.library == "the Zotero desktop app's library"
    (item,) = _items_titled(zotero_local, PNAS_TITLE)
    assert item["collections"] == [zotero_local.seeded.reading]
    assert {"tag": "from-doiget"} in item["tags"]
    notes = [i for i in zotero_local.fake.items.values() if i.get("parentItem") == item["key"]]
    assert any("<blockquote><p>quoted (p. 2)</p></blockquote>" in n.get("note", "") for n in notes)
    assert all(r.path.startswith(("/api/", "/connector/")) for r in zotero_local.fake.requests)


def test_the_desktop_app_is_sent_the_pdf_file_it_does_not_download_links(
    tmp_path: Path, upstream: ReplayUpstream, zotero_local: ZoteroWorld
) -> None:
    served = route_library(upstream)
    env = _env(tmp_path, upstream, zotero_local, DOIGET_ZOTERO_WRITE="on")
    fake = zotero_local.fake
    fake.delete(zotero_local.seeded.preprint)
    ref = f"arXiv:{ATTENTION}"

    def attached(parent: str | None) -> list[dict[str, Any]]:
        return [i for i in fake.items.values()
                if i.get("parentItem") == parent and i["itemType"] == "attachment"]  # fmt: skip

    fetched = _add(env, action="work", target=ref, collection="Reading")
    (item,) = [i for i in fake.items.values() if i.get("archiveID") == ref]
    (pdf,) = attached(item["key"])
    assert fake.files[pdf["key"]] == served
    assert fetched.attachment == pdf["url"] and fetched.attachment.startswith("https://arxiv.org/")
    # Again after the researcher removed it: the library's copy is sent, not fetched anew.
    fake.delete(item["key"])
    again = _add(env, action="work", target=ref)
    (item,) = [i for i in fake.items.values() if i.get("archiveID") == ref]
    (pdf,) = attached(item["key"])
    assert fake.files[pdf["key"]] == served and again.attachment == fetched.attachment
    assert len([r for r in upstream.requests_to("arxiv.org") if "/pdf/" in r.path]) == 1
    # No PDF doiget may fetch (PNAS's is on a host off the allowlist): none is claimed.
    pnas = _add(env, action="work", target=PNAS)
    assert pnas.created is True and pnas.attachment is None
    assert any(why.startswith("the PDF: ") for why in pnas.skipped or [])
    (item,) = _items_titled(zotero_local, PNAS_TITLE)
    assert attached(item["key"]) == []
    assert len(fake.requests_to("/connector/saveAttachment")) == 2


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"action": "note", "note": "n"}, "Web API"),
        ({"action": "tags", "tags": ["t"]}, "Web API"),
    ],
)
def test_the_desktop_app_cannot_take_a_note_or_tags_on_an_existing_item(
    tmp_path: Path,
    upstream: ReplayUpstream,
    zotero_local: ZoteroWorld,
    fields: dict[str, Any],
    said: str,
) -> None:
    env = _env(tmp_path, upstream, zotero_local, DOIGET_ZOTERO_WRITE="on")
    error = _refused(env, target=zotero_local.seeded.article, **fields)
    assert error.code is ErrorCode.CAPABILITY_DENIED and said in error.message
    assert not [r for r in zotero_local.fake.requests if r.path.startswith("/connector/")]


def test_the_desktop_app_names_its_collections_when_one_is_missing(
    tmp_path: Path, upstream: ReplayUpstream, zotero_local: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_local, DOIGET_ZOTERO_WRITE="on")
    error = _refused(env, action="work", target=PNAS, collection="Nowhere")
    assert error.code is ErrorCode.NOT_FOUND and "Reading" in error.message
    assert not [r for r in zotero_local.fake.requests if r.path.startswith("/connector/")]


def test_a_work_already_there_with_nothing_to_add_asks_nothing_and_writes_nothing(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_web, DOIGET_ZOTERO_WRITE="ask")
    asked: Asked = []
    written = _add(env, asked=asked, action="work", target=f"arXiv:{ATTENTION}")
    assert (written.created, written.key) == (False, zotero_web.seeded.preprint)
    assert asked == [] and _writes(zotero_web) == []


def test_the_desktop_app_says_why_a_note_for_a_work_it_holds_was_not_added(
    tmp_path: Path, upstream: ReplayUpstream, zotero_local: ZoteroWorld
) -> None:
    route_library(upstream)
    env = _env(tmp_path, upstream, zotero_local, DOIGET_ZOTERO_WRITE="ask")
    asked: Asked = []
    written = _add(env, asked=asked, action="work", target=f"arXiv:{ATTENTION}", note="n")
    assert (written.created, written.key) == (False, zotero_local.seeded.preprint)
    assert any("Web API" in why for why in written.skipped or [])
    assert asked == []
    assert not [r for r in zotero_local.fake.requests if r.path.startswith("/connector/")]


def test_a_write_zotero_refuses_is_recorded_as_failed_and_said(
    tmp_path: Path,
    upstream: ReplayUpstream,
    zotero_web: ZoteroWorld,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = zotero_web.fake
    monkeypatch.setattr(fake, "_invalid", lambda data, kind: "Note is too long")
    env = _env(tmp_path, upstream, zotero_web)
    error = _refused(env, action="note", target=zotero_web.seeded.article, note="n")
    assert error.code is ErrorCode.NETWORK_ERROR and "Note is too long" in error.message
    rows = [row for row in _rows(env) if row["event"] == "zotero_write"]
    assert [(row["result"], row.get("error_code")) for row in rows] == [
        ("ok", None), ("err", "NETWORK_ERROR"),
    ]  # fmt: skip
    assert rows[1]["detail"].endswith("failed")


@pytest.mark.parametrize(
    "written_as",
    [f"https://doi.org/{PNAS.upper()}", f"doi:{PNAS}", f"http://dx.doi.org/{PNAS}"],
)
def test_a_work_whose_doi_zotero_holds_as_a_link_is_found_not_added_again(
    tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld, written_as: str
) -> None:
    """Researchers paste DOIs as links: the library's item is the work all the same."""
    route_library(upstream)
    held = zotero_web.fake.add_item(
        {"itemType": "journalArticle", "title": "Cartilage (as typed)", "DOI": written_as}
    )
    env = _env(tmp_path, upstream, zotero_web, DOIGET_ZOTERO_WRITE="on")
    written = _add(env, action="work", target=PNAS)
    assert (written.created, written.key) == (False, held)
    assert _writes(zotero_web) == []
