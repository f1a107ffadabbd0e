"""Syncing a Zotero library into doiget's library through the fake Zotero, as the
desktop app's local API, as the Web API and as a group library: works stored with the
researcher's keys and tags, retractions said, PDFs added and searchable, and every
later sync moving only what changed."""

from __future__ import annotations

import json
import stat
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from importutil import snapshot
from integrityutil import WAKEFIELD
from zoterosyncutil import (
    PNAS,
    SENTENCE,
    UNKNOWN_TITLE,
    Library,
    Served,
    build_library,
    route_generated,
    route_works,
    serve,
)

from doiget.config import load_settings
from doiget.contract import build, plain
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import ChunkSearch
from doiget.library.service import Library as PassageLibrary
from doiget.refs import parse_ref
from doiget.verify.lookup import AnswerStore
from doiget.verify.service import Verifier
from doiget.zotero.sync import open_sync
from doiget.zotero.sync_contracts import ZoteroSyncReport
from zoterofake import WEB_HOSTS, FakeZotero

from papersutil import make_papers
from replay import ReplayUpstream

# Requests spaced by no gap: each item's work is identified through DBLP and arXiv, and
# the subject is what a sync stores and says, not the spacing (see tests/pacing.py).
pytestmark = pytest.mark.usefixtures("unpaced")

Progress = list[tuple[int, int, str]]
ATTENTION = "1706.03762"


def _sync(
    env: dict[str, str],
    *,
    collection: str | None = None,
    seen: Progress | None = None,
    passages: bool = False,
) -> ZoteroSyncReport:
    report = _sync_until(env, collection=collection, seen=seen, passages=passages)
    assert report is not None
    return report


def _sync_until(
    env: dict[str, str],
    *,
    collection: str | None = None,
    seen: Progress | None = None,
    passages: bool = False,
    cancel_after: int | None = None,
) -> ZoteroSyncReport | None:
    """A sync, cancelled once ``cancel_after`` items are done (None then)."""

    async def run() -> ZoteroSyncReport | None:
        papers = make_papers(env)
        answers = AnswerStore(Path(env["DOIGET_DATA_DIR"]) / "verify-answers")
        verifier = Verifier(papers.network, answers, env.get("DOIGET_EMAIL"))
        library = PassageLibrary(papers.runtime.settings) if passages else None

        def progress(done: int, total: int, message: str) -> None:
            if seen is not None:
                seen.append((done, total, message))
            if done == cancel_after:
                scope.cancel()

        try:
            with anyio.CancelScope() as scope:
                sync = open_sync(papers, verifier, library)
                return await sync.run(collection=collection, progress=progress)
            return None
        finally:
            if library is not None:
                await library.aclose()
            await papers.network.aclose()
            await papers.aclose()

    return anyio.run(run)


def _stored(env: dict[str, str], ref: str) -> dict[str, Any]:
    papers = make_papers(env)
    try:
        return tomllib.loads(papers.store.metadata_path(parse_ref(ref)).read_text("utf-8"))
    finally:
        papers.index.close()


def _state(env: dict[str, str]) -> Path:
    [path] = (Path(env["DOIGET_DATA_DIR"]) / "zotero").glob("*.json")
    return path


@dataclass
class World:
    served: Served
    lib: Library
    env: dict[str, str]

    @property
    def fake(self) -> FakeZotero:
        return self.served.fake

    @property
    def label(self) -> str:
        fake = self.fake
        if self.served.local is not None:
            return "users/0"
        return f"{'groups' if fake.group else 'users'}/{fake.library_id}"


@pytest.fixture
def make_world(
    tmp_path: Path, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> Iterator[Callable[[str], World]]:
    made: list[Served] = []

    def make(mode: str) -> World:
        served = serve(mode, tmp_path / "zotero-app", upstream)
        made.append(served)
        lib = build_library(served.fake, tmp_path / "made")
        route_works(upstream)
        return World(served, lib, {**doiget_env, **served.env})

    yield make
    for served in made:
        served.stop()


@pytest.fixture(params=["local", "web", "group"])
def world(request: pytest.FixtureRequest, make_world: Callable[[str], World]) -> World:
    return make_world(request.param)


def test_first_sync_stores_the_works_with_the_researchers_keys_tags_and_pdfs(
    world: World,
) -> None:
    fake, lib, env, label = world.fake, world.lib, world.env, world.label
    seen: Progress = []
    report = _sync(env, seen=seen)
    rows = {row.key: row for row in report.results}

    pnas = rows[lib.pnas]
    assert (pnas.status, pnas.ref, pnas.citekey, pnas.pdfs) == ("new", PNAS, "makris2014hypoxia", 1)
    stored = _stored(env, PNAS)
    # Better BibTeX's key from ``extra``; the tags as the researcher wrote them.
    assert stored["doiget"]["aliases"] == {
        "zotero": [f"{label}:{lib.pnas}"],
        "bib": ["makris2014hypoxia"],
    }
    assert stored["doiget"]["zotero_tags"] == ["cartilage", "à lire"]
    papers = make_papers(env)
    try:
        entry = papers.store.entry(parse_ref(PNAS))
        assert entry is not None and entry.has_pdf and entry.bib_key == "makris2014hypoxia"
    finally:
        papers.index.close()

    # Zotero's own citationKey field; a PDF attachment whose file is missing is said.
    attention = rows[lib.attention]
    assert (attention.status, attention.ref, attention.citekey) == (
        "new", ATTENTION, "vaswani2017attention"
    )  # fmt: skip
    assert lib.missing_file in (attention.reason or "") and "missing.pdf" in (
        attention.reason or ""
    )
    # The retracted paper is said so.
    wakefield = rows[lib.wakefield]
    assert (wakefield.status, wakefield.ref, wakefield.retracted) == ("new", WAKEFIELD, True)
    assert "retracted" in (wakefield.reason or "")
    # No source knows these two: the one with a PDF is kept as its PDF (unidentified),
    # the other is listed with why, and not stored.
    odd = rows[lib.unknown_with_pdf]
    assert (odd.status, odd.title) == ("not_identified", UNKNOWN_TITLE)
    assert odd.ref is not None and odd.ref.startswith("local:")
    local = _stored(env, odd.ref)
    assert local["doiget"]["aliases"]["zotero"] == [f"{label}:{lib.unknown_with_pdf}"]
    unknown = rows[lib.unknown]
    assert (unknown.status, unknown.ref) == ("not_identified", None)
    assert "no PDF" in (unknown.reason or "")

    assert plain(report.counts) == {
        "new": 3, "updated": 0, "unchanged": 0, "deleted": 0, "not_identified": 2,
        "retracted": 1, "pdfs_added": 2, "failed": 0,
    }  # fmt: skip
    assert report.requests == world.served.zotero_requests()
    assert report.to_version == fake.version and report.from_version is None
    assert not report.interrupted
    assert seen[-1][0] == seen[-1][1] == len(seen)
    assert stat.S_IMODE(_state(env).stat().st_mode) == 0o600


@pytest.mark.parametrize("mode", ["local", "web"])
def test_a_second_sync_of_an_unchanged_library_is_one_request_and_writes_nothing(
    mode: str, make_world: Callable[[str], World], upstream: ReplayUpstream
) -> None:
    world = make_world(mode)
    env = world.env
    first = _sync(env)
    store = snapshot(Path(env["DOIGET_STORE_ROOT"]))
    log = Path(env["DOIGET_LOG_PATH"]).read_bytes()
    state = _state(env)
    written = (state.read_bytes(), state.stat().st_mtime_ns)
    asked = world.served.zotero_requests()
    elsewhere = len([r for r in upstream.requests if r.host not in WEB_HOSTS])

    again = _sync(env)

    assert world.served.zotero_requests() - asked == again.requests == 1
    assert len([r for r in upstream.requests if r.host not in WEB_HOSTS]) == elsewhere
    assert snapshot(Path(env["DOIGET_STORE_ROOT"])) == store
    assert Path(env["DOIGET_LOG_PATH"]).read_bytes() == log
    assert (state.read_bytes(), state.stat().st_mtime_ns) == written
    assert again.results == [] and again.from_version == again.to_version == first.to_version
    assert plain(again.counts)["unchanged"] == 5


@pytest.mark.parametrize("mode", ["local", "web"])
def test_after_changes_only_the_changed_items_are_read_and_stored_again(
    mode: str, make_world: Callable[[str], World], upstream: ReplayUpstream
) -> None:
    world = make_world(mode)
    fake, lib, env = world.fake, world.lib, world.env
    route_generated(upstream)
    generated = fake.bulk(30)
    first = _sync(env)
    assert plain(first.counts)["new"] == 33, first.results
    changed = generated[5:25]
    for key in changed:
        fake.change(key, tags=[{"tag": "revisited"}])
    fake.change(lib.pnas, tags=[{"tag": "cartilage"}, {"tag": "lu"}])
    asked = len(fake.requests)

    report = _sync(env)

    reads = [r for r in fake.requests[asked:] if "itemKey" in r.query]
    assert [set(r.query["itemKey"].split(",")) for r in reads] == [{*changed, lib.pnas}]
    assert sorted(row.key for row in report.results) == sorted([*changed, lib.pnas])
    assert {row.status for row in report.results} == {"updated"}
    # The listing, the deletions (the Web API's list; the local app compares keys), the read.
    assert report.requests == len(fake.requests) - asked == (2 if mode == "local" else 3)
    assert _stored(env, PNAS)["doiget"]["zotero_tags"] == ["cartilage", "lu"]
    assert _stored(env, "10.5555/gen.00005")["doiget"]["zotero_tags"] == ["revisited"]
    assert plain(report.counts)["unchanged"] == 35 - 21


@pytest.mark.parametrize("mode", ["local", "web"])
def test_a_deleted_item_loses_its_zotero_key_and_the_entry_is_kept(
    mode: str, make_world: Callable[[str], World], upstream: ReplayUpstream
) -> None:
    world = make_world(mode)
    fake, lib, env = world.fake, world.lib, world.env
    _sync(env)
    fake.delete(lib.pnas)  # and its PDF and note with it
    asked = len(fake.requests)

    report = _sync(env)

    [row] = report.results
    assert (row.key, row.status, row.ref) == (lib.pnas, "deleted", PNAS)
    assert "kept" in (row.reason or "")
    stored = _stored(env, PNAS)
    assert stored["doiget"]["aliases"] == {"zotero": [], "bib": ["makris2014hypoxia"]}
    papers = make_papers(env)
    try:
        entry = papers.store.entry(parse_ref(PNAS))
        assert entry is not None and entry.has_pdf
    finally:
        papers.index.close()
    asked_deleted = [r for r in fake.requests[asked:] if r.path.endswith("/deleted")]
    assert len(asked_deleted) == (0 if mode == "local" else 1)
    assert plain(report.counts)["deleted"] == 1
    assert lib.pnas not in _state(env).read_text()


def test_an_interrupted_sync_keeps_what_it_did_and_the_next_goes_on(
    make_world: Callable[[str], World], upstream: ReplayUpstream
) -> None:
    world = make_world("web")
    fake, env = world.fake, world.env
    route_generated(upstream)
    generated = fake.bulk(60)
    # Zotero answers the listing, the reads (the library's 72 items in two) and the
    # first PDF (its request and the file host's), then goes away.
    world.served.answers_left = 1 + 2 + 2

    cut = _sync(env)

    assert cut.interrupted and cut.note and "sync again" in cut.note
    done = {row.key for row in cut.results if row.ref}
    assert done and cut.not_done > 0
    assert len(done) + cut.not_done >= 65
    world.served.answers_left = None
    gone = sorted(done & set(generated))[0]
    fake.delete(gone)  # while no sync runs: the resumed one lists every key, and sees it
    asked = len(fake.requests)

    resumed = _sync(env)

    assert not resumed.interrupted and resumed.from_version is None
    read_again = {
        key for r in fake.requests[asked:] if "itemKey" in r.query
        for key in r.query["itemKey"].split(",")
    }  # fmt: skip
    assert read_again and not read_again & done
    assert [(row.key, row.status) for row in resumed.results if row.status == "deleted"] == [
        (gone, "deleted")
    ]
    assert {row.key for row in resumed.results if row.status == "new"} >= (set(generated) - done)
    final = _sync(env)
    assert final.requests == 1 and final.from_version == fake.version
    assert plain(final.counts)["unchanged"] == 64
    # Whichever item was cut short, its work and PDF are whole now.
    assert _stored(env, PNAS)["doiget"]["aliases"]["zotero"]
    [gone_ref] = [row.ref for row in cut.results if row.key == gone]
    assert _stored(env, gone_ref or "")["doiget"]["aliases"]["zotero"] == []
    papers = make_papers(env)
    try:
        entry = papers.store.entry(parse_ref(PNAS))
        assert entry is not None and entry.has_pdf
    finally:
        papers.index.close()


def test_a_collection_sync_takes_that_collection_and_those_inside_it(
    make_world: Callable[[str], World],
) -> None:
    world = make_world("local")
    lib, env = world.lib, world.env

    nested = _sync(env, collection="Reading/Méthodes")
    assert [(row.key, row.ref) for row in nested.results] == [(lib.pnas, PNAS)]
    assert nested.collection == "Reading/Méthodes"
    reading = _sync(env, collection="reading")
    assert sorted(row.ref or "" for row in reading.results) == sorted([PNAS, WAKEFIELD])
    # The collection's state is its own: the first collection's sync is not redone.
    again = _sync(env, collection="méthodes")
    assert again.results == [] and again.requests == 2  # the collections, the listing

    with pytest.raises(DoigetError) as refused:
        _sync(env, collection="Readng")
    assert refused.value.code is ErrorCode.NOT_FOUND
    assert "Reading" in refused.value.message and "Parent/Child" in refused.value.message
    world.served.answers_left = 0  # Zotero down: its own coded error, nothing done
    with pytest.raises(DoigetError) as down:
        _sync(env, collection="Reading")
    assert down.value.code is not ErrorCode.NOT_FOUND


def test_synced_pdfs_are_found_by_passage_search_with_their_zotero_key_and_tags(
    make_world: Callable[[str], World],
) -> None:
    env = make_world("local").env
    report = _sync(env, collection="Reading", passages=True)
    assert report.indexed == 1

    async def search(**filters: Any) -> Any:
        library = PassageLibrary(load_settings(env))
        try:
            request = build(
                ChunkSearch, project="doiget/papers", query=SENTENCE, filters=filters or None
            )
            return plain(await library.search(request, hybrid=True))
        finally:
            await library.aclose()

    found = anyio.run(search)
    top = found["items"][0]
    assert SENTENCE in top["render_text"]
    assert (top["citekey"], top["doi"]) == ("makris2014hypoxia", PNAS)
    tagged = anyio.run(lambda: search(tags="à lire"))
    assert tagged["items"] and tagged["items"][0]["doi"] == PNAS
    assert anyio.run(lambda: search(tags="nothing-tagged-so"))["items"] == []


def test_the_command_syncs_a_collection_and_prints_the_report(
    make_world: Callable[[str], World],
) -> None:
    import typer
    from typer.testing import CliRunner

    from doiget.cli.zotero_sync import register

    world = make_world("local")
    group = typer.Typer()
    register(group)
    group.command("other")(lambda: None)  # a group of several commands, as `doiget zotero`
    runner = CliRunner()
    args = ["sync", "--collection", "Reading/Méthodes", "--json"]

    first = runner.invoke(group, args, env=world.env)
    second = runner.invoke(group, args, env=world.env)
    text = runner.invoke(group, ["sync", "--collection", "Reading/Méthodes"], env=world.env)
    unknown = runner.invoke(group, ["sync", "--collection", "Nope", "--json"], env=world.env)

    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert [(row["key"], row["status"], row["ref"]) for row in report["results"]] == [
        (world.lib.pnas, "new", PNAS)
    ]
    again = json.loads(second.stdout)
    assert (again["results"], again["requests"]) == ([], 2)
    assert "2 request(s) to Zotero" in text.stdout and "unchanged" in text.stdout
    assert unknown.exit_code != 0 and "NOT_FOUND" in unknown.stdout


def test_a_cancelled_sync_keeps_what_it_stored_and_the_next_goes_on(
    make_world: Callable[[str], World], upstream: ReplayUpstream
) -> None:
    world = make_world("local")
    route_generated(upstream)
    world.fake.bulk(40)
    state = Path(world.env["DOIGET_DATA_DIR"]) / "zotero"

    assert _sync_until(world.env, cancel_after=30) is None

    [path] = state.glob("*.json")
    kept = json.loads(path.read_text("utf-8"))
    stored = {
        key for key, item in kept["items"].items()
        if item["status"] in ("stored", "not_identified")
    }  # fmt: skip
    # Every item done before the cancel is recorded (the last ones after the latest
    # save too); the library version waits.
    assert len(stored) == 30 and kept["version"] is None
    asked = len(world.fake.requests)
    resumed = _sync(world.env)
    read_again = {
        key for r in world.fake.requests[asked:] if "itemKey" in r.query
        for key in r.query["itemKey"].split(",")
    }  # fmt: skip
    assert read_again and not read_again & stored
    assert not resumed.interrupted and resumed.to_version == world.fake.version
    assert plain(_sync(world.env).counts)["unchanged"] == 45
