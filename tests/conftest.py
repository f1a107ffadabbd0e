"""Shared fixtures: the replay upstream and an isolated doiget environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from doiget import redaction

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
def stocked(tmp_path: Path) -> StockedStore:
    """A store of one good paper and every kind of unreadable or hostile file."""
    return stock(tmp_path)


@pytest.fixture
def stocked_env(tmp_path: Path, upstream: ReplayUpstream, stocked: StockedStore) -> dict[str, str]:
    """An isolated doiget environment whose store is ``stocked``."""
    return upstream.isolated_env(tmp_path)
