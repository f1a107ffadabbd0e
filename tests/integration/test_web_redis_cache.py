"""The Redis web cache against a real redis-server on a loopback port."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
import redis.asyncio

from doiget.config import load_settings
from doiget.web.cache import RedisCache, open_cache

REDIS_SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server is not installed (Debian package redis-server)"
)

KEY = bytes(range(32))
MARKER = b"PLAINTEXT-MARKER-c0ffee"


@dataclass
class RedisServer:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server without persistence, stopped at teardown."""
    assert REDIS_SERVER is not None
    port = free_port()
    process = subprocess.Popen(
        [
            REDIS_SERVER,
            "--save",
            "",
            "--appendonly",
            "no",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(tmp_path),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = RedisServer(process, port)
    try:
        deadline = time.monotonic() + 10
        while not answers_ping(port):
            if process.poll() is not None:
                pytest.fail(f"redis-server exited with {process.returncode} on port {port}")
            if time.monotonic() > deadline:
                pytest.fail("redis-server did not answer PING within 10 s")
            time.sleep(0.05)
        yield server
    finally:
        server.stop()


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[redis.asyncio.Redis]:
    """A plain client, to look at what the cache stored."""
    client = redis.asyncio.from_url(redis_server.url)
    yield client
    await client.aclose()


async def test_set_get_roundtrip(redis_server: RedisServer) -> None:
    cache = RedisCache(redis_server.url, KEY)
    try:
        await cache.set("web_search:v1:abc", b"answer", 60)
        entry = await cache.get("web_search:v1:abc")
        assert entry is not None
        assert entry.value == b"answer"
        assert entry.ttl == 60
        assert await cache.get("web_search:v1:missing") is None
    finally:
        await cache.aclose()


async def test_redis_ttl_is_set_from_the_entry_ttl(
    redis_server: RedisServer, raw: redis.asyncio.Redis
) -> None:
    cache = RedisCache(redis_server.url, KEY, prefix="test:")
    try:
        await cache.set("k", b"v", 90.2)
        name = cache.redis_key("k")
        assert name.startswith("test:")
        assert len(name.removeprefix("test:")) == 64  # an HMAC, not the query itself
        assert 89 <= await raw.ttl(name) <= 91
    finally:
        await cache.aclose()


async def test_entries_expire_in_redis(redis_server: RedisServer, raw: redis.asyncio.Redis) -> None:
    cache = RedisCache(redis_server.url, KEY)
    try:
        await cache.set("short", b"v", 1)
        assert await cache.get("short") is not None
        deadline = time.monotonic() + 2.5
        while await raw.exists(cache.redis_key("short")):
            assert time.monotonic() < deadline, "redis kept the entry past its 1 s ttl"
            await anyio.sleep(0.1)
        assert await cache.get("short") is None
    finally:
        await cache.aclose()


async def test_sealed_ttl_is_enforced_on_read(redis_server: RedisServer) -> None:
    # Redis's EX is whole seconds; the exact ttl inside the sealed value decides.
    now = [1_000.0]
    cache = RedisCache(redis_server.url, KEY, clock=lambda: now[0])
    try:
        await cache.set("k", b"v", 60)
        now[0] += 59.5
        entry = await cache.get("k")
        assert entry is not None
        assert entry.age(now[0]) == 59.5
        now[0] += 0.5
        assert await cache.get("k") is None
    finally:
        await cache.aclose()


async def test_stored_value_is_not_plain_text(
    redis_server: RedisServer, raw: redis.asyncio.Redis
) -> None:
    cache = RedisCache(redis_server.url, KEY)
    try:
        await cache.set("page", b"<p>" + MARKER * 10 + b"</p>", 60)
        stored = await raw.get(cache.redis_key("page"))
        assert stored is not None
        assert MARKER not in stored
    finally:
        await cache.aclose()


async def test_value_moved_to_another_key_or_read_with_another_secret_is_a_miss(
    redis_server: RedisServer, raw: redis.asyncio.Redis
) -> None:
    cache = RedisCache(redis_server.url, KEY)
    stranger = RedisCache(redis_server.url, bytes(32))
    try:
        await cache.set("a", b"value of a", 60)
        await raw.copy(cache.redis_key("a"), cache.redis_key("b"))
        assert await cache.get("b") is None
        assert await stranger.get("a") is None
    finally:
        await cache.aclose()
        await stranger.aclose()


async def test_stopped_redis_is_a_miss_not_an_error(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    cache = RedisCache(redis_server.url, KEY)
    try:
        await cache.set("k", b"v", 60)
        redis_server.stop()
        with caplog.at_level("WARNING", logger="doiget.web.cache"):
            started = time.monotonic()
            assert await cache.get("k") is None
            await cache.set("k2", b"v", 60)
            assert await cache.get("k2") is None
            assert time.monotonic() - started < 10
        warnings = [r for r in caplog.records if "redis unavailable" in r.getMessage()]
        assert len(warnings) == 1
    finally:
        await cache.aclose()


async def test_open_cache_uses_redis_when_configured(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    settings = load_settings(
        {
            "DOIGET_CONFIG": str(tmp_path / "absent.toml"),
            "DOIGET_DATA_DIR": str(tmp_path / "data"),
            "REDIS_URL": redis_server.url,
            "DOIGET_CACHE_KEY": "shared across hosts",
        }
    )
    cache = open_cache(settings)
    assert isinstance(cache, RedisCache)
    try:
        await cache.set("k", b"v", 60)
        entry = await cache.get("k")
        assert entry is not None
        assert entry.value == b"v"
    finally:
        await cache.aclose()
