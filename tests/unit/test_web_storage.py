"""The sealed file storage under the web cache and the research sessions."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from doiget.web.storage import CacheEntry, SealedFiles, Sealer

KEY = bytes(range(32))


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def files_in(directory: Path, clock: FakeClock, key: bytes = KEY) -> SealedFiles:
    return SealedFiles(directory, Sealer(key), clock)


def test_entries_are_sealed_private_and_dated_by_their_expiry(tmp_path: Path) -> None:
    clock = FakeClock()
    files = files_in(tmp_path / "s", clock)
    files.write("k", CacheEntry(b"secret words", clock(), 60))
    path = files.path_for("k")
    assert b"secret words" not in path.read_bytes() and len(path.name) == 64
    assert path.stat().st_mode & 0o777 == 0o600 and files.directory.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mtime == pytest.approx(clock() + 60)
    entry = files.read("k", tidy=False)
    assert entry is not None and entry.value == b"secret words"


@pytest.mark.parametrize("tidy", [True, False])
def test_a_foreign_or_expired_file_is_removed_only_when_tidying(tmp_path: Path, tidy: bool) -> None:
    clock = FakeClock()
    files = files_in(tmp_path, clock)
    files.write("old", CacheEntry(b"v", clock(), 10))
    sealed_elsewhere = Sealer(bytes(32)).seal("foreign", CacheEntry(b"v", clock(), 60))
    files.path_for("foreign").write_bytes(sealed_elsewhere)
    clock.now += 10
    assert files.read("old", tidy=tidy) is None
    assert files.read("foreign", tidy=tidy) is None
    assert files.path_for("old").exists() is not tidy
    assert files.path_for("foreign").exists() is not tidy


def test_sweep_removes_the_expired_then_the_soonest_expiring_with_their_locks(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    files = files_in(tmp_path, clock)
    for name, ttl in (("gone", 5), ("soon", 20), ("later", 30), ("last", 40)):
        files.write(name, CacheEntry(b"v", clock(), ttl))
        files.lock_path(name).touch()
    clock.now += 10
    swept = files.sweep(max_files=2)
    assert (swept.live, swept.evicted) == (2, 1)
    kept = {path.name for path in tmp_path.iterdir()}
    for name in ("gone", "soon"):
        assert files.path_for(name).name not in kept and files.lock_path(name).name not in kept
    for name in ("later", "last"):
        assert files.path_for(name).name in kept and files.lock_path(name).name in kept


def test_sweep_bounds_bytes_too(tmp_path: Path) -> None:
    clock = FakeClock()
    files = files_in(tmp_path, clock)
    for index in range(3):
        files.write(f"k{index}", CacheEntry(b"x" * 1000, clock(), 10 + index))
    assert files.sweep(max_files=10, max_bytes=2500).live == 2
    assert not files.path_for("k0").exists()


async def test_a_held_lock_times_out(tmp_path: Path) -> None:
    clock = FakeClock()
    files = files_in(tmp_path, clock)
    files.make_directory()
    async with files.locked("k", 5):
        with pytest.raises(TimeoutError):
            async with files_in(tmp_path, clock).locked("k", 0.1):
                pass
    async with files.locked("k", 0.1):
        await anyio.sleep(0)
