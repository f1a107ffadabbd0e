"""Research sessions without the network: steps, revisions, caps, expiry, sealing, sources."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from webutil import Clock, JsonResearch

from doiget.config import Settings, load_settings
from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.web.failure import Kind, failure_of
from doiget.web.recording import record_found
from doiget.web.research import MAX_SOURCES, MAX_STEPS, Research
from doiget.web.sessions import (
    DIR_NAME,
    EXPIRY_DATED_MARKER,
    MAX_SESSIONS,
    SESSION_TTL,
    DiskSessionStore,
    open_session_store,
)

MARKER = "PLAINTEXT-MARKER-5e551on"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        {"DOIGET_CONFIG": str(tmp_path / "absent.toml"), "DOIGET_DATA_DIR": str(tmp_path / "data")}
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def research(settings: Settings, clock: Clock) -> AsyncIterator[JsonResearch]:
    network = Network(settings)
    core = Research(settings, network, clock=clock)
    yield JsonResearch(core)
    await core.aclose()
    await network.aclose()


def step(number: int, session_id: str | None = None, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "searchStep": f"step {number} text",
        "stepNumber": number,
        "nextStepNeeded": True,
        **extra,
    }
    if session_id is not None:
        args["sessionId"] = session_id
    return args


async def start(research: JsonResearch, **extra: Any) -> str:
    out = await research.step(step(1, researchGoal="a goal", **extra))
    session_id: str = out["sessionId"]
    return session_id


async def failing(call: Any) -> DoigetError:
    with pytest.raises(DoigetError) as caught:
        await call
    return caught.value


# -- steps ------------------------------------------------------------------------------


async def test_step_one_creates_a_session_with_a_url_safe_id(research: JsonResearch) -> None:
    out = await research.step(step(1, researchGoal="Does coffee help?"))
    assert len(out["sessionId"]) >= 20
    assert out["sessionId"].replace("-", "").replace("_", "").isalnum()
    assert out["researchGoal"] == "Does coffee help?"
    assert out["currentStep"] == 1
    assert out["isComplete"] is False
    assert out["responseMode"] == "full"
    assert [s["stepNumber"] for s in out["steps"]] == [1]
    assert out["gaps"] == [] and out["sources"] == []
    assert out["trust"] == "untrusted-external-content"


async def test_a_later_step_without_session_id_is_refused(research: JsonResearch) -> None:
    error = await failing(research.step(step(2)))
    failure = failure_of(error)
    assert failure.kind is Kind.VALIDATION
    assert "sessionId" in failure.message
    assert "stepNumber 1" in failure.suggested_action


async def test_unknown_session_is_not_found(research: JsonResearch) -> None:
    error = await failing(research.step(step(2, "no-such-session")))
    assert failure_of(error).kind is Kind.NOT_FOUND
    assert error.message == (
        "research session no-such-session expired or does not exist; start a new one with "
        "sequential_search step 1"
    )
    for call in (
        research.session({"sessionId": "no-such-session"}),
        research.export({"sessionId": "no-such-session", "format": "json"}),
        research.require("no-such-session"),
        research.record_sources("no-such-session", "web_search", [{"url": "https://a.org/"}]),
    ):
        assert failure_of(await failing(call)).kind is Kind.NOT_FOUND


@pytest.mark.parametrize("field", ["revisesStep", "branchFromStep"])
async def test_naming_a_missing_step_is_refused(research: JsonResearch, field: str) -> None:
    session_id = await start(research)
    extra: dict[str, Any] = {field: 7}
    if field == "revisesStep":
        extra["isRevision"] = True
    error = await failing(research.step(step(2, session_id, **extra)))
    assert failure_of(error).kind is Kind.VALIDATION
    assert f"{field} 7 names no recorded step" in error.message
    assert "steps 1" in error.message
    assert (await research.session({"sessionId": session_id}))["stepCount"] == 1


async def test_bad_step_inputs_are_refused(research: JsonResearch) -> None:
    session_id = await start(research)
    for extra in (
        {"isRevision": True},  # no revisesStep
        {"confidence": 1.5},
        {"confidence": "high"},
        {"rejectedApproaches": "not a list"},
        {"branchId": "has space"},
    ):
        error = await failing(research.step(step(2, session_id, **extra)))
        assert failure_of(error).kind is Kind.VALIDATION, extra
    error = await failing(research.step({"stepNumber": 1, "nextStepNeeded": True}))
    assert "searchStep" in error.message


async def test_a_resent_step_is_recorded_once_and_a_different_one_refused(
    research: JsonResearch,
) -> None:
    session_id = await start(research)
    await research.step(step(2, session_id, reasoning="why"))
    again = await research.step(step(2, session_id, reasoning="why"))
    assert again["stepCount"] == 2
    error = await failing(research.step(step(2, session_id, reasoning="other")))
    assert failure_of(error).kind is Kind.VALIDATION
    assert "revisesStep=2" in failure_of(error).suggested_action


async def test_superseded_by_is_derived_and_the_stored_step_is_untouched(
    research: JsonResearch, settings: Settings, clock: Clock
) -> None:
    session_id = await start(research)
    await research.step(step(2, session_id))
    await research.step(step(3, session_id, isRevision=True, revisesStep=2))
    out = await research.step(step(4, session_id, revisesStep=2))  # isRevision implied
    by_number = {s["stepNumber"]: s for s in out["steps"]}
    assert by_number[2]["supersededBy"] == 4  # the latest revision
    assert by_number[4]["isRevision"] is True
    assert "supersededBy" not in by_number[1] and "supersededBy" not in by_number[3]
    stored = await open_session_store(settings, clock).load(session_id)
    assert stored is not None
    assert all("supersededBy" not in s for s in stored["steps"])
    one = await research.session({"sessionId": session_id, "stepId": 2})
    assert one["responseMode"] == "step"
    assert one["step"]["supersededBy"] == 4
    index = (await research.session({"sessionId": session_id}))["stepIndex"]
    assert index[1] == {
        "stepNumber": 2,
        "oneLiner": "step 2 text",
        "branchId": "main",
        "supersededBy": 4,
    }


async def test_branches_and_gaps(research: JsonResearch) -> None:
    session_id = await start(research)
    await research.step(step(2, session_id, knowledgeGap="no data past 2023"))
    await research.step(step(3, session_id, branchFromStep=1))
    out = await research.step(step(4, session_id, branchId="branch-3", nextStepNeeded=False))
    assert out["branches"] == [{"branchId": "branch-3", "fromStep": 1, "steps": [3, 4]}]
    assert out["gaps"] == [{"gap": "no data past 2023", "foundInStep": 2}]
    assert out["isComplete"] is True
    assert "completedAt" in out


async def test_long_sessions_answer_with_a_summary(research: JsonResearch) -> None:
    session_id = await start(research)
    for number in range(2, 10):
        out = await research.step(step(number, session_id))
    assert out["responseMode"] == "summary"
    assert "steps" not in out
    assert [entry["stepNumber"] for entry in out["stepIndex"]] == list(range(1, 10))
    assert [s["stepNumber"] for s in out["lastSteps"]] == [7, 8, 9]
    assert out["summary"].startswith("9 steps toward: a goal.")


async def test_get_session_summary_and_step_out_of_range(research: JsonResearch) -> None:
    session_id = await start(research)
    await research.step(step(2, session_id))
    await research.step(step(3, session_id))
    view = await research.session({"sessionId": session_id})
    assert view["responseMode"] == "summary"
    assert [s["stepNumber"] for s in view["lastSteps"]] == [1, 2, 3]
    assert view["trust"] == "untrusted-external-content"
    error = await failing(research.session({"sessionId": session_id, "stepId": 99}))
    assert error.message == "Step 99 not found — this session has steps 1-3."


# -- caps and expiry --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("goal", "latest", "summary"),
    [
        (
            "Does coffee help?",
            "Find trials",
            "1 step toward: Does coffee help? Latest (step 1): Find trials. "
            "1 knowledge gap noted; 1 source recorded.",
        ),
        (
            "Map the evidence.",
            "Which trials are blinded?",
            "1 step toward: Map the evidence. Latest (step 1): Which trials are blinded? "
            "1 knowledge gap noted; 1 source recorded.",
        ),
        (
            "Map the evidence",
            "Stop here!",
            "1 step toward: Map the evidence. Latest (step 1): Stop here! "
            "1 knowledge gap noted; 1 source recorded.",
        ),
    ],
)
async def test_the_summary_counts_in_the_singular_and_ends_each_sentence_once(
    research: JsonResearch, goal: str, latest: str, summary: str
) -> None:
    out = await research.step(
        {**step(1, researchGoal=goal, knowledgeGap="no data"), "searchStep": latest}
    )
    await research.record_sources(out["sessionId"], "web_search", [{"url": "https://a.org/x"}])
    view = await research.session({"sessionId": out["sessionId"]})
    assert view["summary"] == summary


async def test_the_summary_counts_in_the_plural(research: JsonResearch) -> None:
    session_id = await start(research, knowledgeGap="no data")
    await research.step(step(2, session_id, knowledgeGap="no trials"))
    await research.record_sources(
        session_id, "web_search", [{"url": "https://a.org/x"}, {"url": "https://a.org/y"}]
    )
    view = await research.session({"sessionId": session_id})
    assert view["summary"] == (
        "2 steps toward: a goal. Latest (step 2): step 2 text. "
        "2 knowledge gaps noted; 2 sources recorded."
    )
    empty = await research.session({"sessionId": await start(research)})
    assert empty["summary"].endswith("0 knowledge gaps noted; 0 sources recorded.")


async def test_the_session_expires_four_hours_after_its_last_write(
    research: JsonResearch, clock: Clock
) -> None:
    session_id = await start(research)
    clock.now += SESSION_TTL - 1
    await research.require(session_id)  # reads do not refresh the TTL...
    await research.step(step(2, session_id))  # ...writes do
    clock.now += SESSION_TTL - 1
    await research.record_sources(session_id, "web_search", [{"url": "https://a.org/x"}])
    clock.now += SESSION_TTL - 1
    await research.require(session_id)
    clock.now += 1
    error = await failing(research.session({"sessionId": session_id}))
    assert failure_of(error).kind is Kind.NOT_FOUND
    assert "expired or does not exist" in error.message
    assert failure_of(await failing(research.step(step(3, session_id)))).kind is Kind.NOT_FOUND


async def test_the_step_cap(research: JsonResearch) -> None:
    session_id = await start(research)
    for number in range(2, MAX_STEPS + 1):
        out = await research.step(step(number, session_id))
    assert out["stepCount"] == MAX_STEPS
    assert "warning" in out
    error = await failing(research.step(step(MAX_STEPS + 1, session_id)))
    failure = failure_of(error)
    assert failure.kind is Kind.VALIDATION
    assert f"limit of {MAX_STEPS} steps" in failure.message
    assert "research_export" in failure.suggested_action
    assert "new session" in failure.suggested_action


async def test_the_session_cap_evicts_the_longest_idle(
    research: JsonResearch, clock: Clock, settings: Settings
) -> None:
    ids = []
    for _ in range(MAX_SESSIONS):
        ids.append(await start(research))
        clock.now += 1
    await research.step(step(2, ids[0]))  # the first session is now the most recently used
    clock.now += 1
    newest = await start(research)
    assert failure_of(await failing(research.require(ids[1]))).kind is Kind.NOT_FOUND
    for kept in (ids[0], ids[2], ids[-1], newest):
        await research.require(kept)
    files = [p for p in (settings.data_dir / DIR_NAME).iterdir() if not p.name.startswith(".")]
    assert len(files) == MAX_SESSIONS


async def test_expired_sessions_make_room_before_live_ones_are_evicted(
    tmp_path: Path, clock: Clock
) -> None:
    store = DiskSessionStore(tmp_path / "s", bytes(32), clock, max_sessions=2)
    await store.create("old", {"n": 1})
    clock.now += SESSION_TTL
    await store.create("a", {"n": 2})
    await store.create("b", {"n": 3})
    assert await store.load("a") == {"n": 2}
    assert await store.load("b") == {"n": 3}
    assert len([p for p in (tmp_path / "s").iterdir() if not p.name.startswith(".")]) == 2


def _as_written_before_expiry_dating(
    store: DiskSessionStore, session_id: str, updated: float
) -> None:
    """Make a session file look as earlier versions left it: stamped with its last
    update, in a directory without the expiry-dating marker."""
    (store.path_for(session_id).parent / EXPIRY_DATED_MARKER).unlink()
    os.utime(store.path_for(session_id), (updated, updated))


async def test_a_live_session_from_an_earlier_version_survives_the_next_create(
    tmp_path: Path, clock: Clock
) -> None:
    store = DiskSessionStore(tmp_path / "s", bytes(32), clock)
    await store.create("earlier", {"n": 1})
    clock.now += 3600
    await store.update("earlier", lambda session: session.update(n=2))
    _as_written_before_expiry_dating(store, "earlier", clock.now)
    clock.now += 60
    await store.create("next", {"n": 3})
    assert await store.load("earlier") == {"n": 2}
    assert store.path_for("earlier").exists()
    assert await store.load("next") == {"n": 3}


async def test_an_expired_session_from_an_earlier_version_is_still_swept(
    tmp_path: Path, clock: Clock
) -> None:
    store = DiskSessionStore(tmp_path / "s", bytes(32), clock)
    await store.create("earlier", {"n": 1})
    _as_written_before_expiry_dating(store, "earlier", clock.now)
    clock.now += SESSION_TTL + 60
    await store.create("next", {"n": 2})
    assert not store.path_for("earlier").exists()
    assert await store.load("next") == {"n": 2}


# -- storage ------------------------------------------------------------------------------


async def test_the_session_file_is_sealed_and_named_by_hmac(
    research: JsonResearch, settings: Settings
) -> None:
    session_id = await start(research, reasoning=MARKER)
    await research.record_sources(
        session_id, "web_search", [{"url": f"https://a.org/{MARKER}", "title": MARKER}]
    )
    directory = settings.data_dir / DIR_NAME
    (path,) = [entry for entry in directory.iterdir() if not entry.name.startswith(".")]
    assert not any(session_id in entry.name for entry in directory.iterdir())
    assert len(path.name) == 64
    blob = path.read_bytes()
    assert MARKER.encode() not in blob
    assert b"a goal" not in blob
    assert directory.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o600


async def test_a_tampered_file_reads_as_missing(research: JsonResearch, settings: Settings) -> None:
    session_id = await start(research)
    (path,) = [p for p in (settings.data_dir / DIR_NAME).iterdir() if not p.name.startswith(".")]
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))
    assert failure_of(await failing(research.require(session_id))).kind is Kind.NOT_FOUND


async def test_concurrent_updates_lose_nothing(research: JsonResearch) -> None:
    session_id = await start(research)

    async def found(n: int) -> None:
        await research.record_sources(session_id, "web_search", [{"url": f"https://a.org/{n}"}])

    async with anyio.create_task_group() as group:
        for n in range(25):
            group.start_soon(found, n)
        group.start_soon(research.step, step(2, session_id))
    view = await research.session({"sessionId": session_id})
    assert view["sourceCount"] == 25
    assert view["stepCount"] == 2


async def test_two_stores_on_one_folder_lose_no_update(
    research: JsonResearch, settings: Settings, clock: Clock
) -> None:
    # A CLI process and a server share the data folder: each has its own store.
    session_id = await start(research)
    network = Network(settings)
    other = JsonResearch(Research(settings, network, clock=clock))

    async def found(core: Research, n: int) -> None:
        await core.record_sources(session_id, "web_search", [{"url": f"https://b.org/{n}"}])

    try:
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(found, research if n % 2 else other, n)
    finally:
        await other.aclose()
        await network.aclose()
    view = await research.session({"sessionId": session_id})
    assert view["sourceCount"] == 20


async def test_a_file_sealed_with_another_key_is_left_in_place(
    research: JsonResearch, settings: Settings, clock: Clock, tmp_path: Path
) -> None:
    session_id = await start(research)
    foreign = load_settings(
        {
            "DOIGET_CONFIG": str(tmp_path / "absent.toml"),
            "DOIGET_DATA_DIR": str(settings.data_dir),
            "DOIGET_CACHE_KEY": "a different key held by another process",
        }
    )
    network = Network(foreign)
    stranger = JsonResearch(Research(foreign, network, clock=clock))
    try:
        with pytest.raises(DoigetError):
            await stranger.session({"sessionId": session_id})
    finally:
        await stranger.aclose()
        await network.aclose()
    assert (await research.session({"sessionId": session_id}))["sessionId"] == session_id


# -- sources ------------------------------------------------------------------------------


async def test_sources_are_deduplicated_by_doi_then_url(
    research: JsonResearch, clock: Clock
) -> None:
    session_id = await start(research)
    await research.record_sources(
        session_id,
        "web_search",
        [
            {"url": "https://www.nature.com/articles/x", "title": "X on the web", "kind": "web"},
            {"url": "https://www.nature.com/articles/x/#comments", "title": "dup"},
            {"url": "ftp://nope.example/", "title": "no usable link"},
            {"title": "no link at all"},
        ],
    )
    clock.now += 60
    await research.record_sources(
        session_id,
        "academic_search",
        [
            {
                "url": "https://www.nature.com/articles/x",
                "title": "X",
                "doi": "https://doi.org/10.1038/X",
                "authors": ["Doe, Jane"],
                "year": "2020",
                "journal": "Nature",
                "kind": "paper",
            },
            {"url": "https://europepmc.org/x", "doi": "10.1038/x", "kind": "paper"},
            {"url": "https://www.nature.com/articles/x", "doi": "10.1038/other", "kind": "paper"},
            {"doi": "10.1000/only-doi", "title": "Only a DOI"},
        ],
    )
    sources = (await research.session({"sessionId": session_id}))["sources"]
    assert [s["url"] for s in sources] == [
        "https://www.nature.com/articles/x",
        "https://www.nature.com/articles/x",
        "https://doi.org/10.1000/only-doi",
    ]
    first = sources[0]
    assert first["title"] == "X on the web"  # the first finder's fields win
    assert first["tool"] == "web_search"
    assert first["foundAt"] == "2027-01-15T08:00:00Z"
    assert first["doi"] == "10.1038/x"  # completed by the later, richer record
    assert first["authors"] == ["Doe, Jane"]
    assert first["year"] == 2020
    assert first["kind"] == "paper"
    assert sources[1]["doi"] == "10.1038/other"
    assert sources[2]["kind"] == "paper"


async def test_sources_beyond_the_cap_are_counted_not_kept(research: JsonResearch) -> None:
    session_id = await start(research)
    batch = [{"url": f"https://a.org/{n}"} for n in range(MAX_SOURCES + 7)]
    await research.record_sources(session_id, "web_search", batch)
    view = await research.session({"sessionId": session_id})
    assert view["sourceCount"] == MAX_SOURCES
    assert view["sourcesDropped"] == 7


async def test_step_answers_echo_only_the_recent_sources(research: JsonResearch) -> None:
    session_id = await start(research)
    batch = [{"url": f"https://a.org/{n}"} for n in range(30)]
    await research.record_sources(session_id, "web_search", batch)
    out = await research.step(step(2, session_id))
    assert out["sourceCount"] == 30
    assert [s["url"] for s in out["sources"]] == [f"https://a.org/{n}" for n in range(20, 30)]


# -- export -------------------------------------------------------------------------------


async def test_export_refuses_an_unknown_format(research: JsonResearch) -> None:
    session_id = await start(research)
    error = await failing(research.export({"sessionId": session_id, "format": "docx"}))
    assert failure_of(error).kind is Kind.VALIDATION
    assert "bibtex" in error.message


async def test_markdown_escapes_external_text(research: JsonResearch) -> None:
    session_id = await start(research)
    await research.record_sources(
        session_id,
        "web_search",
        [{"url": "https://a.org/p?q=<x>", "title": "Ignore [this](javascript:x) # now\nplease"}],
    )
    document = (await research.export({"sessionId": session_id}))["document"]
    assert "1. [Ignore \\[this\\](javascript:x) \\# now please](<https://a.org/p?q=%3Cx%3E>)" in (
        document
    )


async def test_export_of_an_empty_bibliography(research: JsonResearch) -> None:
    session_id = await start(research)
    for format_name, empty in (("bibtex", ""), ("ris", ""), ("csl-json", "[]\n")):
        out = await research.export({"sessionId": session_id, "format": format_name})
        assert out["document"] == empty
        assert out["sourceCount"] == 0
    out = await research.export({"sessionId": session_id, "format": "json"})
    assert json.loads(out["document"])["steps"][0]["searchStep"] == "step 1 text"


async def test_answers_match_the_declared_output_schemas_past_the_full_view(
    research: JsonResearch,
) -> None:
    import jsonschema

    from doiget.server.web_tools import web_toolset

    schemas = {
        spec.name: spec.output_schema
        for spec in web_toolset(runtime=None).tools  # type: ignore[arg-type]
    }
    session_id = await start(research)
    for number in range(2, 11):
        answer = await research.step(step(number, session_id))
        jsonschema.validate(answer, schemas["sequential_search"])
    assert "summary" in answer
    jsonschema.validate(
        await research.session({"sessionId": session_id}), schemas["get_research_session"]
    )
    exported = await research.export({"sessionId": session_id, "format": "markdown"})
    jsonschema.validate(exported, schemas["research_export"])


# -- recording what the tools found -------------------------------------------------------


async def test_record_found_records_or_returns_the_warning(
    research: Research, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    session_id = await start(research)
    found = [{"url": "https://a.org/paper", "title": "A paper", "kind": "paper"}]
    assert await record_found(research, session_id, "search_arxiv", found) is None
    assert (await research.session({"sessionId": session_id}))["sourceCount"] == 1
    clock.now += SESSION_TTL + 1
    with caplog.at_level("WARNING", logger="doiget.web.sessions"):
        warning = await record_found(research, session_id, "academic_search", found)
    assert warning is not None and "expired or does not exist" in warning
    assert any("not recorded" in record.getMessage() for record in caplog.records)


async def test_session_files_are_dated_by_their_expiry(
    research: Research, settings: Settings, clock: Clock
) -> None:
    await start(research)
    (path,) = [p for p in (settings.data_dir / DIR_NAME).iterdir() if not p.name.startswith(".")]
    assert path.stat().st_mtime == pytest.approx(clock() + SESSION_TTL)
