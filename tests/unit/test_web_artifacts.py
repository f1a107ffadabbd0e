"""Large results become artifacts: the threshold, reading back, expiry, bad uris."""

from __future__ import annotations

import hashlib

import pytest

from doiget.owner import owned_by
from doiget.web.artifacts import (
    ARTIFACT_TTL_SECONDS,
    LINK_THRESHOLD_BYTES,
    MAX_PER_OWNER,
    Artifacts,
    Linked,
)
from doiget.web.cache import MemoryCache

MIME = "text/markdown"
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class FakeClock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def artifacts(clock: FakeClock) -> Artifacts:
    return Artifacts(MemoryCache(clock=clock), clock=clock)


async def test_one_byte_under_the_threshold_stays_inline(artifacts: Artifacts) -> None:
    assert LINK_THRESHOLD_BYTES == 24 * 1024
    assert await artifacts.link_if_large("x" * (LINK_THRESHOLD_BYTES - 1), MIME, "s") is None


async def test_threshold_counts_utf8_bytes_not_characters(artifacts: Artifacts) -> None:
    # 12 288 two-byte characters are 24 KiB of UTF-8.
    body = "é" * (LINK_THRESHOLD_BYTES // 2)
    linked = await artifacts.link_if_large(body, MIME, "s")
    assert linked is not None
    assert linked.bytes == LINK_THRESHOLD_BYTES


async def test_exactly_the_threshold_is_linked_and_reads_back(artifacts: Artifacts) -> None:
    body = "# Title\n" + "y" * (LINK_THRESHOLD_BYTES - 8)
    linked = await artifacts.link_if_large(body, MIME, "A long page about y.")
    assert isinstance(linked, Linked)
    digest = hashlib.sha256(body.encode()).hexdigest()
    assert linked.uri == f"research://artifact/{digest}"
    assert linked.to_dict() == {
        "resource": linked.uri,
        "bytes": LINK_THRESHOLD_BYTES,
        "mimeType": MIME,
        "summary": "A long page about y.",
        "expiresAt": "2026-01-01T00:30:00Z",
        "linked": True,
    }
    assert await artifacts.read(linked.uri) == (body, MIME)


async def test_same_body_links_to_the_same_uri(artifacts: Artifacts) -> None:
    body = "z" * LINK_THRESHOLD_BYTES
    first = await artifacts.link_if_large(body, MIME, "s")
    second = await artifacts.link_if_large(body, "text/plain", "s")
    assert first is not None
    assert second is not None
    assert first.uri == second.uri


async def test_expired_artifact_reads_as_none(artifacts: Artifacts, clock: FakeClock) -> None:
    linked = await artifacts.link_if_large("w" * LINK_THRESHOLD_BYTES, MIME, "s")
    assert linked is not None
    clock.now += ARTIFACT_TTL_SECONDS - 1
    assert await artifacts.read(linked.uri) is not None
    clock.now += 1
    assert await artifacts.read(linked.uri) is None


async def test_uri_of_another_id_reads_as_none(artifacts: Artifacts) -> None:
    linked = await artifacts.link_if_large("v" * LINK_THRESHOLD_BYTES, MIME, "s")
    assert linked is not None
    other = hashlib.sha256(b"something else").hexdigest()
    assert await artifacts.read(f"research://artifact/{other}") is None


async def test_stored_body_not_matching_its_id_reads_as_none(clock: FakeClock) -> None:
    cache = MemoryCache(clock=clock)
    artifacts = Artifacts(cache, clock=clock)
    claimed = hashlib.sha256(b"the real body").hexdigest()
    await cache.set(f"artifact:{claimed}", b"text/plain\nsomeone else's body", 60)
    assert await artifacts.read(f"research://artifact/{claimed}") is None


@pytest.mark.parametrize(
    "uri",
    [
        "",
        "research://artifact/",
        "research://artifact/abc",
        "research://artifact/" + "A" * 64,
        "research://artifact/" + "0" * 63 + "g",
        "research://artifact/" + "0" * 64 + "/extra",
        "https://artifact/" + "0" * 64,
        "research://artifacts/" + "0" * 64,
    ],
)
async def test_malformed_uri_reads_as_none(artifacts: Artifacts, uri: str) -> None:
    assert await artifacts.read(uri) is None


async def test_mime_type_with_a_line_break_is_refused(artifacts: Artifacts) -> None:
    with pytest.raises(ValueError):
        await artifacts.link_if_large("u" * LINK_THRESHOLD_BYTES, "text/plain\nx", "s")


async def test_an_artifact_is_its_owners_alone_and_each_owner_has_a_cap(
    artifacts: Artifacts,
) -> None:
    def body(number: int) -> str:
        return f"{number}\n" + "z" * LINK_THRESHOLD_BYTES

    with owned_by("aaaaaaaaaaaa"):
        mine = await artifacts.link_if_large(body(0), MIME, "s")
    assert mine is not None
    with owned_by("bbbbbbbbbbbb"):
        assert await artifacts.read(mine.uri) is None  # as for an id never made
        theirs = [await artifacts.link_if_large(body(n), MIME, "s") for n in range(1, 80)]
        readable = [await artifacts.read(link.uri) is not None for link in theirs if link]
    assert await artifacts.read(mine.uri) is None  # the local owner is another owner too
    with owned_by("aaaaaaaaaaaa"):
        assert await artifacts.read(mine.uri) == (body(0), MIME)
    dropped = len(theirs) - MAX_PER_OWNER
    assert readable == [False] * dropped + [True] * MAX_PER_OWNER
