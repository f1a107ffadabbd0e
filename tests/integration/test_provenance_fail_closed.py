"""A provenance row that cannot be written stops the call with LOG_ERROR at once:
no further request, no store write, no index row, and a message that says what
had already happened."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.papers import contracts as c
from doiget.papers.service import Papers

from papersutil import (
    LOGIN_PAGE,
    MEDIA_PDF,
    NATURE,
    PHYSREVE,
    make_papers,
    route_nature,
    route_physreve,
)
from replay import FIXTURES, ReplayUpstream, Reply


def break_log(log: Path) -> None:
    """Make every later append fail for real: the log path becomes a directory."""
    if log.exists():
        shutil.move(log, log.with_name("moved-away.jsonl"))
    log.mkdir(parents=True)


def breaking_then(log: Path, reply: Reply) -> Callable[[dict[str, str]], Reply]:
    """A responder that breaks the log while answering (the resolve row is written)."""

    def answer(_query: dict[str, str]) -> Reply:
        if not log.is_dir():
            break_log(log)
        return reply

    return answer


def stored_files(env: dict[str, str]) -> list[Path]:
    root = Path(env["DOIGET_STORE_ROOT"])
    return sorted(
        path for path in root.rglob("*") if path.is_file() and path.suffix in (".pdf", ".toml")
    )


async def _fails_with_log_error(papers: Papers, call: Callable[[Papers], object]) -> DoigetError:
    try:
        with pytest.raises(DoigetError) as caught:
            await call(papers)  # type: ignore[misc]
    finally:
        await papers.aclose()
    assert caught.value.code is ErrorCode.LOG_ERROR, caught.value
    assert "nothing was done" not in caught.value.message
    return caught.value


async def test_a_failed_attempt_row_stops_before_the_next_candidate(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_physreve(upstream)  # first candidate answers HTML, the second has the PDF
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    upstream.responder(
        "link.aps.org", "/accepted/10.1103/PhysRevE.88.012814", breaking_then(log, LOGIN_PAGE)
    )
    error = await _fails_with_log_error(
        make_papers(doiget_env), lambda p: p.fetch(c.PaperFetch(ref=PHYSREVE))
    )
    assert upstream.requests_to("arxiv.org") == []  # the second candidate was never asked
    assert stored_files(doiget_env) == []  # no TOML, no PDF
    assert "link.aps.org" not in error.message or "contacted" in error.message
    assert "contacted" in error.message and "nothing was stored" in error.message


async def test_a_single_failing_candidate_ends_log_error_not_its_own_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    upstream.responder("europepmc.org", "/articles/pmc4221854", breaking_then(log, LOGIN_PAGE))
    await _fails_with_log_error(
        make_papers(doiget_env), lambda p: p.fetch(c.PaperFetch(ref=NATURE))
    )
    assert stored_files(doiget_env) == []


async def test_a_good_pdf_is_not_stored_when_its_row_fails(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    pdf = (FIXTURES / MEDIA_PDF).read_bytes()
    upstream.responder(
        "europepmc.org",
        "/articles/pmc4221854",
        breaking_then(log, Reply(200, pdf, {"Content-Type": "application/pdf"})),
    )
    await _fails_with_log_error(
        make_papers(doiget_env), lambda p: p.fetch(c.PaperFetch(ref=NATURE))
    )
    assert stored_files(doiget_env) == []
    assert not list(Path(doiget_env["DOIGET_STORE_ROOT"]).glob(".doiget-*.part"))


@pytest.mark.parametrize("call", ["fetch", "metadata_only", "resolve"])
async def test_a_failed_resolve_row_stops_before_the_store(
    upstream: ReplayUpstream, doiget_env: dict[str, str], call: str
) -> None:
    route_nature(upstream)
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    unpaywall = (FIXTURES / "unpaywall/v2-10.1038_nature12373.json").read_bytes()
    upstream.responder(
        "api.unpaywall.org",
        f"/v2/{NATURE}",
        breaking_then(log, Reply(200, unpaywall, {"Content-Type": "application/json"})),
    )
    request = c.PaperFetch(ref=NATURE) if call != "resolve" else c.PaperLookup(ref=NATURE)
    error = await _fails_with_log_error(
        make_papers(doiget_env),
        lambda p: getattr(p, call)(request),
    )
    assert upstream.requests_to("europepmc.org") == []
    assert stored_files(doiget_env) == []
    assert "unpaywall" in error.message


async def test_a_failed_failure_row_replaces_the_upstream_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    upstream.responder(
        "api.crossref.org", "/works/10.1371/notarealdoi", breaking_then(log, Reply(404, b"nope"))
    )
    upstream.route("api.unpaywall.org", "/v2/10.1371/notarealdoi", Reply(404, b"{}"))
    await _fails_with_log_error(
        make_papers(doiget_env), lambda p: p.fetch(c.PaperFetch(ref="10.1371/notarealdoi"))
    )


async def test_a_batch_stops_every_ref_when_the_log_fails(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    route_physreve(upstream)
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    upstream.responder("europepmc.org", "/articles/pmc4221854", breaking_then(log, LOGIN_PAGE))
    upstream.responder(
        "link.aps.org", "/accepted/10.1103/PhysRevE.88.012814", breaking_then(log, LOGIN_PAGE)
    )
    papers = make_papers(doiget_env)
    try:
        result = await papers.batch(c.BatchFetch(refs=[NATURE, PHYSREVE]))
    finally:
        await papers.aclose()
    assert isinstance(result, c.BatchFetched)
    assert [row.error.code for row in result.results if row.error] == ["LOG_ERROR"] * 2
    assert upstream.requests_to("arxiv.org") == []
    assert stored_files(doiget_env) == []
