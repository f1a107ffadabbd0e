"""The Zotero connection against a fake Zotero in Zotero's own shapes: the desktop app
on a loopback port, the Web API on the replay upstream. Everything stays on loopback."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError, ErrorCode
from doiget.net.deadport import DeadPort
from doiget.net.network import Network
from doiget.zotero.api import UPDATE_TRIES, ItemQuery, ZoteroApi, open_api
from doiget.zotero.models import ZoteroItem
from zoterofake import (
    ANNOTATION_TYPES,
    FILES_HOST,
    GROUP_ID,
    READ_KEY,
    UPLOAD_HOST,
    USER_ID,
    WRITE_KEY,
    FakeRequest,
    ZoteroWorld,
    web_env,
)

from netutil import make_network
from replay import ReplayUpstream, Reply


@asynccontextmanager
async def opened(env: dict[str, str]) -> AsyncIterator[ZoteroApi]:
    network: Network = make_network(env)
    try:
        api = open_api(network.settings, network)
        assert api is not None
        yield api
    finally:
        await network.aclose()


def _tag_added(tag: str):  # type: ignore[no-untyped-def]
    def change(item: ZoteroItem) -> dict[str, object] | None:
        tags = list(item.data.get("tags", []))
        if any(t.get("tag") == tag for t in tags):
            return None
        return {"tags": [*tags, {"tag": tag}]}

    return change


def _key_headers(requests: list[FakeRequest]) -> list[str | None]:
    return [r.header("zotero-api-key") for r in requests]


# -- reading -------------------------------------------------------------------------


async def test_a_listing_pages_by_start_until_total_results_and_link_say_it_is_done(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake, seeded = zotero_web.fake, zotero_web.seeded
    for n in range(230):
        fake.add_note(seeded.book, f"<p>Note {n} — ß</p>")
    made = fake.bulk(30)
    async with opened({**doiget_env, **zotero_web.env}) as api:
        children = await api.children(seeded.book)
        page = await api.search(ItemQuery(q="Generated article"), start=10, limit=15)
    listings = fake.requests_to(f"/items/{seeded.book}/children")
    assert [int(r.query.get("start", "0")) for r in listings] == [0, 100, 200]
    assert all(r.query["limit"] == "100" for r in listings)
    assert len(children) == 231  # the notes and the missing PDF's attachment
    assert page.total == 30 and len(page.items) == 15
    assert {item.key for item in page.items} <= set(made)


async def test_a_versions_listing_that_zotero_pages_is_followed_to_its_end(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake = zotero_web.fake
    fake.versions_page = 25
    made = fake.bulk(100)
    async with opened({**doiget_env, **zotero_web.env}) as api:
        versions, library_version = await api.item_versions()
    assert set(made) <= set(versions) and len(versions) == len(fake.items)
    assert library_version == fake.version
    listings = [r for r in fake.requests if r.query.get("format") == "versions"]
    assert [int(r.query.get("start", "0")) for r in listings] == list(range(0, len(versions), 25))


async def test_the_local_app_lists_everything_in_one_answer_and_the_client_stops(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    zotero_local.fake.bulk(150)
    async with opened({**doiget_env, **zotero_local.env}) as api:
        versions, _ = await api.item_versions()
        collections = await api.collections()
    assert len(versions) == len(zotero_local.fake.items)
    assert len(zotero_local.fake.requests_to("/api/users/0/items")) == 1
    tree = {c.name: c.parent for c in collections}
    assert tree["Méthodes"] == zotero_local.seeded.reading
    assert tree["Reading"] is None


async def test_versions_since_name_only_what_changed_and_an_unchanged_library_costs_one_request(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake, seeded = zotero_web.fake, zotero_web.seeded
    async with opened({**doiget_env, **zotero_web.env}) as api:
        before = await api.library_version()
        fake.change(seeded.article, title="Über die Quantenmechanik (revised)")
        fake.change(seeded.preprint, extra="arXiv: 1706.03762")
        changed, after = await api.item_versions(since=before)
        fake.requests.clear()
        nothing, same = await api.item_versions(since=after)
    assert changed == {seeded.article: before + 1, seeded.preprint: before + 2}
    assert after == before + 2
    assert nothing == {} and same == after
    assert len(fake.requests) == 1


async def test_deletions_since_a_version_are_listed_by_the_web_api_and_not_by_the_local_app(
    zotero_web: ZoteroWorld, zotero_local: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake, seeded = zotero_web.fake, zotero_web.seeded
    async with opened({**doiget_env, **zotero_web.env}) as api:
        before = await api.library_version()
        fake.delete(seeded.book)  # with its attachment
        gone = await api.deleted(before)
        later = await api.deleted(gone.library_version if gone else 0)
    assert gone is not None
    assert set(gone.items) == {seeded.book, seeded.missing_pdf}
    assert gone.library_version == fake.version
    assert later is not None and later.items == ()
    async with opened({**doiget_env, **zotero_local.env}) as local:
        assert await local.deleted(0) is None


@pytest.mark.parametrize("world", ["zotero_web", "zotero_local", "zotero_group"])
async def test_every_kind_of_annotation_comes_with_its_page_label_colour_and_text(
    world: str, request: pytest.FixtureRequest, doiget_env: dict[str, str]
) -> None:
    zotero: ZoteroWorld = request.getfixturevalue(world)
    async with opened({**doiget_env, **zotero.env}) as api:
        annotations = await api.annotations(zotero.seeded.pdf)
        children = await api.children(zotero.seeded.article)
    by_type = {a.type: a for a in annotations}
    assert set(by_type) == set(ANNOTATION_TYPES)
    assert by_type["highlight"].text == "Passage marked by a highlight — «ünïcode»"
    assert by_type["underline"].text.startswith("Passage marked by a underline")
    assert by_type["ink"].text == "" and by_type["image"].comment == "image comment"
    assert by_type["highlight"].page_label == "2" and by_type["text"].page_label == "7"
    assert all(a.color.startswith("#") and a.attachment == zotero.seeded.pdf for a in annotations)
    assert {c.item_type for c in children} == {"attachment", "note"}


@pytest.mark.parametrize("world", ["zotero_web", "zotero_local"])
async def test_non_ascii_titles_and_names_are_searched_and_kept_intact(
    world: str, request: pytest.FixtureRequest, doiget_env: dict[str, str]
) -> None:
    zotero: ZoteroWorld = request.getfixturevalue(world)
    async with opened({**doiget_env, **zotero.env}) as api:
        found = await api.search(ItemQuery(q="Schrödinger"))
        by_tag = await api.search(ItemQuery(tags=("quantum", "to-read")))
        in_collection = await api.search(ItemQuery(collection=zotero.seeded.methods))
        of_year = await api.search(ItemQuery(year=2017))
        item = await api.item(zotero.seeded.article)
    assert [i.key for i in found.items] == [zotero.seeded.article]
    assert [i.key for i in by_tag.items] == [zotero.seeded.article]
    assert [i.key for i in in_collection.items] == [zotero.seeded.book]
    assert [i.key for i in of_year.items] == [zotero.seeded.preprint]
    assert item.title == "Über die Quantenmechanik der Ströme — 量子輸送"
    names = [c.get("lastName") or c.get("name") for c in item.data["creators"]]
    assert names == ["Schrödinger", "Łukasiewicz", "東京大学 物理学教室"]
    assert item.csl is not None and item.csl["author"][0]["family"] == "Schrödinger"
    assert item.children == 2


async def test_items_by_key_asks_fifty_keys_a_request_and_reports_progress(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    made = zotero_web.fake.bulk(120)
    heard: list[tuple[int, int]] = []
    async with opened({**doiget_env, **zotero_web.env}) as api:
        items = await api.items_by_key(
            made, progress=lambda done, total: heard.append((done, total))
        )
    asked = [r for r in zotero_web.fake.requests if "itemKey" in r.query]
    assert [len(r.query["itemKey"].split(",")) for r in asked] == [50, 50, 20]
    assert sorted(i.key for i in items) == sorted(made)
    assert heard == [(50, 120), (100, 120), (120, 120)]


async def test_an_unknown_item_is_not_found_and_a_malformed_key_is_refused_before_sending(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    async with opened({**doiget_env, **zotero_web.env}) as api:
        with pytest.raises(DoigetError) as unknown:
            await api.item("ZZZZ9999")
        sent = len(zotero_web.fake.requests)
        with pytest.raises(DoigetError) as malformed:
            await api.item("../keys/current")
    assert unknown.value.code is ErrorCode.NOT_FOUND
    assert malformed.value.code is ErrorCode.INVALID_REF
    assert len(zotero_web.fake.requests) == sent


# -- attachments -------------------------------------------------------------------


async def test_a_web_attachment_is_downloaded_from_the_file_host_without_the_key(
    zotero_web: ZoteroWorld, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    seeded = zotero_web.seeded
    async with opened({**doiget_env, **zotero_web.env}) as api:
        pdf = await api.item(seeded.pdf)
        got = await api.attachment_file(pdf, tmp_path)
        missing = await api.attachment_file(await api.item(seeded.missing_pdf), tmp_path)
    assert got.path is not None and Path(got.path).read_bytes() == seeded.pdf_bytes
    assert got.missing is None
    assert missing.path is None and missing.missing and "no file" in missing.missing
    api_requests = [r for r in upstream.requests if r.host == "api.zotero.org"]
    file_requests = [r for r in upstream.requests if r.host == FILES_HOST]
    assert file_requests, "the download went to the file host"
    assert all(r.headers.get("zotero-api-key") == WRITE_KEY for r in api_requests)
    assert all("zotero-api-key" not in r.headers for r in file_requests)
    assert all(WRITE_KEY not in json.dumps(r.headers) + r.raw_query for r in file_requests)


async def test_a_local_attachment_is_its_path_in_zotero_storage_or_said_missing(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    seeded = zotero_local.seeded
    async with opened({**doiget_env, **zotero_local.env}) as api:
        got = await api.attachment_file(await api.item(seeded.pdf), tmp_path)
        missing = await api.attachment_file(await api.item(seeded.missing_pdf), tmp_path)
        note = await api.attachment_file(await api.item(seeded.note), tmp_path)
    assert got.path is not None and Path(got.path).read_bytes() == seeded.pdf_bytes
    assert Path(got.path).name == "Schrödinger 1926.pdf"
    assert missing.path is None and missing.missing and "missing" in missing.missing
    assert note.path is None and note.missing
    assert all(r.header("zotero-api-key") is None for r in zotero_local.fake.requests)


# -- limits the upstream sets ------------------------------------------------------


async def test_a_429_is_retried_after_the_seconds_retry_after_asks(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    zotero_web.fake.switches.rate_limited = 1
    zotero_web.fake.switches.retry_after = 1
    async with opened({**doiget_env, **zotero_web.env}) as api:
        version = await api.library_version()
    assert version == zotero_web.fake.version
    assert len(zotero_web.fake.requests) == 2


async def test_a_retry_after_beyond_the_wait_limit_is_said_with_when_to_try_again(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    zotero_web.fake.switches.rate_limited = 5
    zotero_web.fake.switches.retry_after = 600
    async with opened({**doiget_env, **zotero_web.env}) as api:
        with pytest.raises(DoigetError) as caught:
            await api.library_version()
    assert caught.value.code is ErrorCode.RATE_LIMITED
    assert caught.value.retry_after == 600
    assert len(zotero_web.fake.requests) == 1


async def test_backoff_holds_every_request_to_zotero_for_the_seconds_it_names(
    zotero_web: ZoteroWorld, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    zotero_web.fake.switches.backoffs = 1
    zotero_web.fake.switches.backoff_seconds = 2
    async with opened({**doiget_env, **zotero_web.env}) as api:
        await api.library_version()
        await api.item(zotero_web.seeded.article)
        await api.collections()
    starts = [r.started for r in upstream.requests if r.host == "api.zotero.org"]
    assert len(starts) == 3
    assert starts[1] - starts[0] >= 1.9  # held for the Backoff, not the 0.1 s gap
    assert starts[2] - starts[1] < 1.9  # and only once


async def test_a_backoff_longer_than_doiget_waits_fails_at_once_without_a_request(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    zotero_web.fake.switches.backoffs = 1
    zotero_web.fake.switches.backoff_seconds = 3600
    async with opened({**doiget_env, **zotero_web.env}) as api:
        await api.library_version()
        with pytest.raises(DoigetError) as caught:
            await api.item(zotero_web.seeded.article)
    assert caught.value.code is ErrorCode.RATE_LIMITED
    assert caught.value.retry_after is not None and caught.value.retry_after > 3500
    assert len(zotero_web.fake.requests) == 1


# -- keys and libraries ------------------------------------------------------------


async def test_a_read_only_key_reads_and_every_write_is_refused_saying_how_to_get_one(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**doiget_env, **web_env(key=READ_KEY)}
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(zotero_web.seeded.pdf_bytes)
    before = {key: dict(data) for key, data in zotero_web.fake.items.items()}
    async with opened(env) as api:
        access = await api.key_access()
        assert (await api.item(zotero_web.seeded.article)).title
        refusals = []
        for write in (
            api.create_items([{"itemType": "book", "title": "x"}]),
            api.update_item(zotero_web.seeded.article, _tag_added("doiget")),
            api.create_collection("doiget"),
            api.upload_attachment(zotero_web.seeded.article, pdf, filename="p.pdf", title="PDF"),
        ):
            with pytest.raises(DoigetError) as caught:
                await write
            refusals.append(caught.value)
    assert access.read and not access.write and access.user_id == USER_ID
    for refusal in refusals:
        assert refusal.code is ErrorCode.CAPABILITY_DENIED
        assert "write access" in refusal.message and "zotero.org/settings/keys" in refusal.message
        assert READ_KEY not in refusal.message
    assert zotero_web.fake.items == before


async def test_a_key_zotero_does_not_know_is_refused_without_showing_it(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    bogus = "NoSuchKey000000000000000"
    async with opened({**doiget_env, **web_env(key=bogus)}) as api:
        with pytest.raises(DoigetError) as caught:
            await api.search(ItemQuery())
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "DOIGET_ZOTERO_API_KEY" in caught.value.message
    assert bogus not in caught.value.message


async def test_a_group_library_is_read_under_its_own_prefix_with_the_groups_access(
    zotero_group: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    async with opened({**doiget_env, **zotero_group.env}) as api:
        access = await api.key_access()
        page = await api.search(ItemQuery(q="Attention"))
        result = await api.create_items([{"itemType": "book", "title": "Gruppenbuch"}])
    assert access.read and access.write
    assert api.library.prefix == f"groups/{GROUP_ID}"
    assert [i.key for i in page.items] == [zotero_group.seeded.preprint]
    assert list(result.created) == [0]
    library_paths = [r.path for r in zotero_group.fake.requests if r.path != "/keys/current"]
    assert all(p.startswith(f"/groups/{GROUP_ID}/") for p in library_paths)


# -- writing -----------------------------------------------------------------------


async def test_creates_go_fifty_a_request_each_with_its_own_write_token(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    items = [{"itemType": "journalArticle", "title": f"Écrit {n}"} for n in range(120)]
    items[63] = {"title": "no item type"}
    async with opened({**doiget_env, **zotero_web.env}) as api:
        result = await api.create_items(items)
    posts = [r for r in zotero_web.fake.requests if r.method == "POST"]
    assert [len(json.loads(r.body)) for r in posts] == [50, 50, 20]
    tokens = [r.header("zotero-write-token") for r in posts]
    assert all(t is not None and len(t) == 32 and int(t, 16) >= 0 for t in tokens)
    assert len(set(tokens)) == 3
    assert set(result.created) == set(range(120)) - {63}
    assert "itemType" in result.failed[63]
    assert result.library_version == zotero_web.fake.version
    assert zotero_web.fake.items[result.created[119]]["title"] == "Écrit 119"


async def test_an_update_that_meets_a_change_made_meanwhile_is_re_read_and_re_asked(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake, key = zotero_web.fake, zotero_web.seeded.article
    fake.switches.conflicts = 1
    seen: list[int] = []

    def change(item: ZoteroItem) -> dict[str, object] | None:
        seen.append(item.version)
        return {"tags": [*item.data["tags"], {"tag": "doiget:verified"}]}

    async with opened({**doiget_env, **zotero_web.env}) as api:
        updated = await api.update_item(key, change)
    patches = [r for r in fake.requests if r.method == "PATCH"]
    assert len(seen) == 2 and seen[1] > seen[0]  # asked again on the newer state
    assert [r.header("if-unmodified-since-version") for r in patches] == [str(v) for v in seen]
    tags = [t["tag"] for t in fake.items[key]["tags"]]
    assert tags == ["quantum", "to-read", "doiget:verified"]
    assert fake.items[key]["dateModified"] == "2026-11-27T12:30:00Z"  # their change kept
    assert updated.version == fake.items[key]["version"]


async def test_an_item_that_keeps_changing_is_given_up_on_without_overwriting(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    fake, key = zotero_web.fake, zotero_web.seeded.article
    fake.switches.conflicts = 100
    before = dict(fake.items[key])
    async with opened({**doiget_env, **zotero_web.env}) as api:
        with pytest.raises(DoigetError) as caught:
            await api.update_item(key, _tag_added("doiget"))
    assert caught.value.code is ErrorCode.NETWORK_ERROR
    assert (
        "kept changing" in caught.value.message
        and "nothing was overwritten" in caught.value.message
    )
    assert len([r for r in fake.requests if r.method == "PATCH"]) == UPDATE_TRIES
    assert fake.items[key]["tags"] == before["tags"]


async def test_an_update_with_nothing_to_change_sends_nothing(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    async with opened({**doiget_env, **zotero_web.env}) as api:
        await api.update_item(zotero_web.seeded.article, _tag_added("quantum"))
    assert not [r for r in zotero_web.fake.requests if r.method != "GET"]


async def test_a_pdf_is_uploaded_in_zoteros_three_steps_and_a_known_file_is_not_sent_again(
    zotero_web: ZoteroWorld, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    fake, seeded = zotero_web.fake, zotero_web.seeded
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(seeded.pdf_bytes + b"\n% another copy\n")
    async with opened({**doiget_env, **zotero_web.env}) as api:
        key = await api.upload_attachment(seeded.preprint, pdf, filename="Vaswani.pdf", title="PDF")
        uploads = len([r for r in upstream.requests if r.host == UPLOAD_HOST])
        again = await api.upload_attachment(seeded.preprint, pdf, filename="V2.pdf", title="PDF")
    assert fake.files[key] == pdf.read_bytes()
    assert fake.items[key]["parentItem"] == seeded.preprint
    assert fake.items[key]["md5"] == hashlib.md5(pdf.read_bytes()).hexdigest()
    assert fake.files[again] == pdf.read_bytes()
    assert uploads == 1
    assert len([r for r in upstream.requests if r.host == UPLOAD_HOST]) == 1  # exists: 1
    steps = [r for r in upstream.requests if r.path.endswith(f"/items/{key}/file")]
    assert [r.body.decode().split("=")[0] for r in steps] == ["md5", "upload"]
    assert all(r.headers.get("if-none-match") == "*" for r in steps)
    assert all(
        "zotero-api-key" not in r.headers for r in upstream.requests if r.host == UPLOAD_HOST
    )


async def test_a_new_collection_is_created_under_its_parent(
    zotero_web: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    async with opened({**doiget_env, **zotero_web.env}) as api:
        made = await api.create_collection("Lectures ☕", zotero_web.seeded.reading)
        listed = {c.key: c for c in await api.collections()}
    assert listed[made.key].name == "Lectures ☕"
    assert listed[made.key].parent == zotero_web.seeded.reading


# -- the desktop app -----------------------------------------------------------------


async def test_the_connector_saves_a_work_with_its_pdf_into_a_named_collection(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    fake = zotero_local.fake
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(zotero_local.seeded.pdf_bytes)
    work = {
        "itemType": "journalArticle",
        "title": "Sur la dynamique de l'électron",
        "creators": [{"creatorType": "author", "firstName": "Henri", "lastName": "Poincaré"}],
        "DOI": "10.1007/BF03013466",
    }
    before = set(fake.items)
    async with opened({**doiget_env, **zotero_local.env}) as api:
        await api.connector_save(
            work, collection="Méthodes", pdf_url="https://example.org/p.pdf", pdf=pdf
        )
    new = {k: fake.items[k] for k in set(fake.items) - before}
    saved = next(d for d in new.values() if d.get("itemType") == "journalArticle")
    attachment = next(d for d in new.values() if d.get("itemType") == "attachment")
    assert saved["title"] == work["title"]
    assert saved["collections"] == [zotero_local.seeded.methods]
    assert attachment["parentItem"] == saved["key"]
    assert fake.files[attachment["key"]] == pdf.read_bytes()
    assert [r.path for r in fake.requests] == [
        "/connector/getSelectedCollection",
        "/connector/saveItems",
        "/connector/saveAttachment",
        "/connector/updateSession",
    ]


async def test_the_connector_saves_nothing_when_the_collection_does_not_exist(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    before = dict(zotero_local.fake.items)
    async with opened({**doiget_env, **zotero_local.env}) as api:
        with pytest.raises(DoigetError) as caught:
            await api.connector_save(
                {"itemType": "book", "title": "x"}, collection="Nowhere", pdf_url=None
            )
    assert caught.value.code is ErrorCode.NOT_FOUND
    assert "Méthodes" in caught.value.message and "Reading" in caught.value.message
    assert zotero_local.fake.items == before


async def test_the_local_app_cannot_note_tag_or_upload_and_says_the_web_api_can(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    seeded = zotero_local.seeded
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(seeded.pdf_bytes)
    async with opened({**doiget_env, **zotero_local.env}) as api:
        access = await api.key_access()
        refusals = []
        for write in (
            api.create_items([{"itemType": "note", "parentItem": seeded.article, "note": "n"}]),
            api.update_item(seeded.article, _tag_added("doiget")),
            api.create_collection("x"),
            api.upload_attachment(seeded.article, pdf, filename="p.pdf", title="PDF"),
        ):
            with pytest.raises(DoigetError) as caught:
                await write
            refusals.append(caught.value)
    assert access.read and not access.write
    for refusal in refusals:
        assert refusal.code is ErrorCode.CAPABILITY_DENIED
        assert "DOIGET_ZOTERO_API_KEY" in refusal.message and "Web API" in refusal.message
    assert zotero_local.fake.requests == []


@pytest.mark.parametrize(
    "path", ["/debug", "/connectorX/ping", "/api/../debug", "/integration/document"]
)
async def test_the_desktop_app_is_asked_nothing_outside_its_api_and_connector_paths(
    path: str, zotero_local: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    network = make_network({**doiget_env, **zotero_local.env})
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("zotero_local").send(
                "GET", f"{zotero_local.env['DOIGET_ZOTERO_LOCAL']}{path}"
            )
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert zotero_local.fake.requests == []


async def test_a_desktop_app_that_is_not_running_is_said_with_how_to_reach_it(
    doiget_env: dict[str, str],
) -> None:
    dead = DeadPort()
    try:
        async with opened({**doiget_env, "DOIGET_ZOTERO_LOCAL": dead.proxy_url}) as api:
            with pytest.raises(DoigetError) as caught:
                await api.library_version()
    finally:
        dead.close()
    assert caught.value.code is ErrorCode.NETWORK_ERROR
    assert "Allow other applications" in caught.value.message


async def test_a_desktop_app_whose_local_api_is_off_is_said_with_the_setting_to_turn_on(
    zotero_local: ZoteroWorld, doiget_env: dict[str, str]
) -> None:
    zotero_local.fake.local_api_enabled = False
    async with opened({**doiget_env, **zotero_local.env}) as api:
        with pytest.raises(DoigetError) as caught:
            await api.search(ItemQuery(q="x"))
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "Allow other applications" in caught.value.message


# -- settings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "named"),
    [
        (
            {
                "DOIGET_ZOTERO_LOCAL": "1",
                "DOIGET_ZOTERO_LIBRARY": f"users/{USER_ID}",
                "DOIGET_ZOTERO_API_KEY": WRITE_KEY,
            },
            "both set",
        ),
        ({"DOIGET_ZOTERO_LOCAL": "1", "DOIGET_ZOTERO_API_KEY": WRITE_KEY}, "both set"),
        ({"DOIGET_ZOTERO_LOCAL": "http://192.168.1.5:23119"}, "loopback"),
        ({"DOIGET_ZOTERO_LOCAL": "https://127.0.0.1:23119"}, "loopback"),
        ({"DOIGET_ZOTERO_LOCAL": "http://127.0.0.1"}, "loopback"),
        ({"DOIGET_ZOTERO_LOCAL": "http://127.0.0.1:23119/debug"}, "loopback"),
        ({"DOIGET_ZOTERO_LOCAL": "yes"}, "loopback"),
        ({"DOIGET_ZOTERO_LIBRARY": "user/1", "DOIGET_ZOTERO_API_KEY": WRITE_KEY}, "users/"),
        ({"DOIGET_ZOTERO_LIBRARY": "groups/abc", "DOIGET_ZOTERO_API_KEY": WRITE_KEY}, "users/"),
        ({"DOIGET_ZOTERO_LIBRARY": f"users/{USER_ID}"}, "needs DOIGET_ZOTERO_API_KEY"),
        ({"DOIGET_ZOTERO_LOCAL": "1", "DOIGET_ZOTERO_WRITE": "always"}, "off"),
    ],
)
def test_a_zotero_setting_doiget_cannot_honour_refuses_the_start(
    env: dict[str, str], named: str, tmp_path: Path
) -> None:
    base = {"DOIGET_DATA_DIR": str(tmp_path), "DOIGET_CONFIG": str(tmp_path / "config.toml")}
    with pytest.raises(DoigetError) as caught:
        load_settings({**base, **env})
    assert caught.value.code is ErrorCode.INVALID_CONFIG
    assert named in caught.value.message
    assert WRITE_KEY not in caught.value.message


def test_the_zotero_toolset_is_served_by_default_only_when_a_library_is_configured(
    tmp_path: Path,
) -> None:
    base = {"DOIGET_DATA_DIR": str(tmp_path), "DOIGET_CONFIG": str(tmp_path / "config.toml")}
    assert "zotero" not in load_settings(base).toolsets
    local = load_settings({**base, "DOIGET_ZOTERO_LOCAL": "http://localhost:23120/"})
    assert local.toolsets[-1] == "zotero" and local.zotero.local_url == "http://127.0.0.1:23120"
    assert local.zotero.write == "off"
    web = load_settings({**base, **web_env(write="ask")})
    assert "zotero" in web.toolsets and web.zotero.write == "ask"
    chosen = load_settings({**base, **web_env(), "DOIGET_TOOLSETS": "papers"})
    assert chosen.toolsets == ("papers",)
    assert str(web.secret("DOIGET_ZOTERO_API_KEY")) != WRITE_KEY


@pytest.mark.parametrize("world", ["zotero_web", "zotero_local"])
async def test_a_year_finds_the_items_whatever_way_their_date_is_written(
    world: str, request: pytest.FixtureRequest, doiget_env: dict[str, str]
) -> None:
    """Zotero keeps dates as the researcher typed them: the year is found in any of them."""
    zotero: ZoteroWorld = request.getfixturevalue(world)
    dated = {
        date: zotero.fake.add_item(
            {"itemType": "journalArticle", "title": f"On {date}", "date": date}
        )
        for date in ("March 2017", "15 March 2017", "2017/06/12", "Spring 2017", "ca. 2017")
    }
    other = zotero.fake.add_item({"itemType": "book", "title": "Not then", "date": "June 12017"})
    async with opened({**doiget_env, **zotero.env}) as api:
        found = await api.search(ItemQuery(year=2017), limit=100)
    keys = {item.key for item in found.items}
    assert set(dated.values()) | {zotero.seeded.preprint} == keys
    assert other not in keys


@pytest.mark.parametrize("status", [403, 400])
async def test_a_refusal_by_the_file_storage_is_not_blamed_on_the_key(
    zotero_web: ZoteroWorld,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    tmp_path: Path,
    status: int,
) -> None:
    """An expired upload authorisation is the storage's answer, not the key's."""
    body = b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>"
    upstream.route(UPLOAD_HOST, "/", Reply(status, body, {"Content-Type": "application/xml"}))
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(zotero_web.seeded.pdf_bytes + b"\n% a copy Zotero does not hold\n")
    async with opened({**doiget_env, **zotero_web.env}) as api:
        with pytest.raises(DoigetError) as refused:
            await api.upload_attachment(
                zotero_web.seeded.preprint, pdf, filename="p.pdf", title="PDF"
            )
    error = refused.value
    assert error.code is ErrorCode.NETWORK_ERROR, error.message
    assert "file storage" in error.message and "Request has expired" in error.message
    assert "key" not in error.message.lower()
    assert error.details is not None and error.details["retryable"] is True
