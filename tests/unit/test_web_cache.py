"""The web cache backends that need no server: memory, encrypted disk, tiered."""

from __future__ import annotations

import shutil
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from doiget.config import Settings, load_settings
from doiget.errors import DoigetError
from doiget.web.cache import EncryptedDiskCache, MemoryCache, TieredCache, open_cache
from doiget.web.storage import KEY_BYTES, storage_secret

KEY = bytes(range(32))
MARKER = b"ZEBRA-MARKER-7f3a"


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def files_under(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()]


def settings_for(tmp_path: Path, **env: str) -> Settings:
    return load_settings(
        {
            "DOIGET_CONFIG": str(tmp_path / "absent.toml"),
            "DOIGET_DATA_DIR": str(tmp_path / "data"),
            **env,
        }
    )


# -- memory ------------------------------------------------------------------------


async def test_memory_roundtrip_and_age() -> None:
    clock = FakeClock()
    cache = MemoryCache(clock=clock)
    await cache.set("k", b"v", 60)
    clock.advance(10)
    entry = await cache.get("k")
    assert entry is not None
    assert entry.value == b"v"
    assert entry.ttl == 60
    assert entry.age(clock()) == 10


async def test_memory_expiry_never_returns_stale() -> None:
    clock = FakeClock()
    cache = MemoryCache(clock=clock)
    await cache.set("k", b"v", 30)
    clock.advance(29.9)
    assert await cache.get("k") is not None
    clock.advance(0.1)
    assert await cache.get("k") is None
    assert len(cache) == 0


async def test_memory_lru_evicts_least_recently_used_by_count() -> None:
    cache = MemoryCache(max_entries=2, clock=FakeClock())
    await cache.set("a", b"1", 60)
    await cache.set("b", b"2", 60)
    assert await cache.get("a") is not None  # a is now the most recently used
    await cache.set("c", b"3", 60)
    assert await cache.get("b") is None
    assert await cache.get("a") is not None
    assert await cache.get("c") is not None


async def test_memory_evicts_by_bytes_and_skips_oversized_values() -> None:
    cache = MemoryCache(max_entries=10, max_bytes=10, clock=FakeClock())
    await cache.set("a", b"12345", 60)
    await cache.set("b", b"12345", 60)
    await cache.set("c", b"123", 60)
    assert await cache.get("a") is None
    assert await cache.get("b") is not None
    await cache.set("huge", b"x" * 11, 60)
    assert await cache.get("huge") is None
    assert await cache.get("c") is not None


async def test_memory_overwrite_replaces_value() -> None:
    cache = MemoryCache(clock=FakeClock())
    await cache.set("k", b"old", 60)
    await cache.set("k", b"new", 60)
    entry = await cache.get("k")
    assert entry is not None
    assert entry.value == b"new"
    assert len(cache) == 1


# -- encrypted disk ----------------------------------------------------------------


async def test_disk_roundtrip_and_permissions(tmp_path: Path) -> None:
    directory = tmp_path / "web-cache"
    clock = FakeClock()
    cache = EncryptedDiskCache(directory, KEY, clock=clock)
    await cache.set("web_search:v1:abc", b"answer", 60)
    entry = await cache.get("web_search:v1:abc")
    assert entry is not None
    assert (entry.value, entry.stored_at, entry.ttl) == (b"answer", clock(), 60)
    assert await cache.get("web_search:v1:other") is None

    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    [file] = files_under(directory)
    assert file == cache.path_for("web_search:v1:abc")
    assert stat.S_IMODE(file.stat().st_mode) == 0o600


async def test_disk_files_are_not_plain_text(tmp_path: Path) -> None:
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=FakeClock())
    key = "scrape_page:v1:" + MARKER.decode()
    await cache.set(key, b"<html>" + MARKER * 20 + b"</html>", 60)
    files = files_under(tmp_path / "c")
    assert files
    for path in files:
        content = path.read_bytes()
        assert MARKER not in content
        assert MARKER.decode() not in path.name


async def test_disk_wrong_key_is_a_miss(tmp_path: Path) -> None:
    await EncryptedDiskCache(tmp_path / "c", KEY, clock=FakeClock()).set("k", b"v", 60)
    other = EncryptedDiskCache(tmp_path / "c", bytes(32), clock=FakeClock())
    assert await other.get("k") is None


async def test_disk_tampered_file_is_a_miss_and_removed(tmp_path: Path) -> None:
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=FakeClock())
    await cache.set("k", b"value", 60)
    path = cache.path_for("k")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    assert await cache.get("k") is None
    assert not path.exists()


@pytest.mark.parametrize(
    "content", [b"", b"short", bytes(range(256))[::-3]], ids=["empty", "short", "binary"]
)
async def test_disk_garbage_file_is_a_miss(tmp_path: Path, content: bytes) -> None:
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=FakeClock())
    path = cache.path_for("k")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert await cache.get("k") is None


async def test_disk_file_copied_to_another_keys_name_is_a_miss(tmp_path: Path) -> None:
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=FakeClock())
    await cache.set("key-a", b"value of a", 60)
    shutil.copyfile(cache.path_for("key-a"), cache.path_for("key-b"))
    assert await cache.get("key-b") is None
    entry = await cache.get("key-a")
    assert entry is not None
    assert entry.value == b"value of a"


async def test_disk_expiry_with_injected_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=clock)
    await cache.set("k", b"v", 30)
    clock.advance(29)
    assert await cache.get("k") is not None
    clock.advance(1)
    assert await cache.get("k") is None
    assert not cache.path_for("k").exists()


async def test_disk_prune_removes_expired_and_bounds_count(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = EncryptedDiskCache(tmp_path / "c", KEY, clock=clock, max_files=3, prune_interval=60)
    await cache.set("short", b"v", 10)
    clock.advance(20)  # "short" has expired; the next prune removes it unread
    for index in range(4):
        await cache.set(f"k{index}", b"v", 100 + index)
    cache.prune()
    names = {path.name for path in files_under(tmp_path / "c")}
    # The three latest-expiring entries stay; the soonest-expiring and the expired go.
    assert names == {cache.path_for(f"k{index}").name for index in (1, 2, 3)}


async def test_disk_unwritable_directory_is_a_no_op(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = EncryptedDiskCache(blocker / "c", KEY, clock=FakeClock())
    await cache.set("k", b"v", 60)  # must not raise
    assert await cache.get("k") is None


def test_disk_refuses_a_key_of_the_wrong_length(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        EncryptedDiskCache(tmp_path, b"short")


# -- tiered ------------------------------------------------------------------------


async def test_tiered_promotes_disk_hits_with_the_remaining_ttl(tmp_path: Path) -> None:
    clock = FakeClock()
    disk = EncryptedDiskCache(tmp_path / "c", KEY, clock=clock)
    await disk.set("k", b"v", 100)
    clock.advance(40)
    memory = MemoryCache(clock=clock)
    tiered = TieredCache(memory, disk)

    entry = await tiered.get("k")
    assert entry is not None
    assert entry.value == b"v"
    promoted = await memory.get("k")
    assert promoted is not None
    assert promoted.age(clock()) == 40

    # Served from memory now, and gone from memory when the disk entry would be.
    cache_file = disk.path_for("k")
    cache_file.unlink()
    assert await tiered.get("k") is not None
    clock.advance(60)
    assert await memory.get("k") is None
    assert await tiered.get("k") is None


async def test_tiered_writes_both_tiers(tmp_path: Path) -> None:
    clock = FakeClock()
    memory = MemoryCache(clock=clock)
    disk = EncryptedDiskCache(tmp_path / "c", KEY, clock=clock)
    tiered = TieredCache(memory, disk)
    await tiered.set("k", b"v", 60)
    assert await memory.get("k") is not None
    assert await disk.get("k") is not None
    await tiered.aclose()


# -- secret and opening ------------------------------------------------------------


def test_storage_secret_generates_a_private_key_file_once(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    first = storage_secret(settings)
    path = tmp_path / "data" / "web-cache.key"
    assert len(first) == KEY_BYTES
    assert path.read_bytes() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert storage_secret(settings) == first
    # No temp files are left beside it.
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["web-cache.key"]


def test_storage_secret_racing_callers_agree_on_one_key(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    barrier = threading.Barrier(8)

    def make() -> bytes:
        barrier.wait()
        return storage_secret(settings)

    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = list(pool.map(lambda _: make(), range(8)))
    assert len(set(keys)) == 1
    assert (tmp_path / "data" / "web-cache.key").read_bytes() == keys[0]


def test_storage_secret_refuses_a_key_file_of_the_wrong_length(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "web-cache.key").write_bytes(b"too short")
    with pytest.raises(DoigetError, match=r"web-cache\.key"):
        storage_secret(settings)


def test_storage_secret_from_env_is_stable_and_writes_no_file(tmp_path: Path) -> None:
    first = storage_secret(settings_for(tmp_path, DOIGET_CACHE_KEY="correct horse battery"))
    again = storage_secret(settings_for(tmp_path, DOIGET_CACHE_KEY="correct horse battery"))
    other = storage_secret(settings_for(tmp_path, DOIGET_CACHE_KEY="another passphrase"))
    assert first == again
    assert len(first) == KEY_BYTES
    assert other != first
    assert not (tmp_path / "data" / "web-cache.key").exists()


def test_open_cache_off_returns_none(tmp_path: Path) -> None:
    assert open_cache(settings_for(tmp_path, DOIGET_WEB_CACHE="0")) is None
    assert not (tmp_path / "data").exists()


async def test_open_cache_default_is_memory_over_encrypted_disk(tmp_path: Path) -> None:
    cache = open_cache(settings_for(tmp_path))
    assert isinstance(cache, TieredCache)
    assert isinstance(cache.disk, EncryptedDiskCache)
    await cache.set("k", MARKER, 60)
    entry = await cache.get("k")
    assert entry is not None
    assert entry.value == MARKER
    files = files_under(tmp_path / "data" / "web-cache")
    assert len(files) == 1
    assert MARKER not in files[0].read_bytes()
    await cache.aclose()
