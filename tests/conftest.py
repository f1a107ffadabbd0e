"""Shared fixtures: the replay upstream and an isolated doiget environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from doiget import redaction
from pacing import unpace
from zoterofake import ZoteroWorld, local_world, web_world

from replay import ReplayUpstream
from storeedges import StockedStore, stock


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only() -> Iterator[None]:
    """Secrets a test configures in-process are forgotten when it ends."""
    remembered = set(redaction._known)
    yield
    redaction._known.clear()
    redaction._known.update(remembered)


@pytest.fixture(scope="session")
def _replay_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayUpstream]:
    upstream = ReplayUpstream().start(tmp_path_factory.mktemp("replay-ca"))
    yield upstream
    upstream.stop()


@pytest.fixture
def upstream(_replay_server: ReplayUpstream) -> Iterator[ReplayUpstream]:
    """The replay upstream with no routes and no recorded requests."""
    _replay_server.reset()
    yield _replay_server
    _replay_server.reset()


@pytest.fixture
def doiget_env(tmp_path: Path, upstream: ReplayUpstream) -> dict[str, str]:
    """An environment for the real program: private dirs, pointed at the replay upstream."""
    return {**upstream.isolated_env(tmp_path), "DOIGET_EMAIL": "tests@example.org"}


@pytest.fixture
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's requests spaced by no gap (see tests/pacing.py)."""
    unpace(monkeypatch.setattr)


@pytest.fixture
def stocked(tmp_path: Path) -> StockedStore:
    """A store of one good paper and every kind of unreadable or hostile file."""
    return stock(tmp_path)


@pytest.fixture
def stocked_env(tmp_path: Path, upstream: ReplayUpstream, stocked: StockedStore) -> dict[str, str]:
    """An isolated doiget environment whose store is ``stocked``."""
    return upstream.isolated_env(tmp_path)


@pytest.fixture
def zotero_local(tmp_path: Path) -> Iterator[ZoteroWorld]:
    """A seeded fake Zotero desktop app (local API + connector) on a loopback port;
    ``env`` holds DOIGET_ZOTERO_LOCAL."""
    world, server = local_world(tmp_path / "zotero-app")
    yield world
    server.stop()


@pytest.fixture
def zotero_web(upstream: ReplayUpstream) -> ZoteroWorld:
    """A seeded fake Zotero user library behind api.zotero.org (replay upstream); ``env``
    holds DOIGET_ZOTERO_LIBRARY, DOIGET_ZOTERO_API_KEY (write access) and
    DOIGET_ZOTERO_WRITE=on. Combine with ``upstream.env``."""
    return web_world(upstream)


@pytest.fixture
def zotero_group(upstream: ReplayUpstream) -> ZoteroWorld:
    """The same seeded library as a group library reached with a group key."""
    return web_world(upstream, group=True)
