"""The Redis web cache against a real redis-server on a loopback port."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
import redis.asyncio
from redisutil import RedisServer, needs_redis, raw_fixture, redis_server_fixture  # noqa: F401

from doiget.config import load_settings
from doiget.web.cache import RedisCache, open_cache

pytestmark = needs_redis

KEY = bytes(range(32))
MARKER = b"PLAINTEXT-MARKER-c0ffee"


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
