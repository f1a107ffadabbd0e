"""Two doiget replicas (two ports, separate data directories) sharing one real
redis-server: research sessions and the web cache are shared, and a batch split
across both keeps the per-source rate limits at the upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
from httputil import TOKEN, http_server, http_session, token_file
from redisutil import RedisServer, needs_redis, redis_server_fixture  # noqa: F401
from webpages import BRAVE, BRAVE_ANSWER

from netutil import breaches_of_window, min_gap
from replay import ReplayUpstream

pytestmark = needs_redis


def replica_env(base: dict[str, str], root: Path, redis_url: str, tokens: Path) -> dict[str, str]:
    """Everything of its own but the Redis server (and the token file)."""
    root.mkdir()
    return {
        **base,
        "DOIGET_DATA_DIR": str(root / "data"),
        "DOIGET_STORE_ROOT": str(root / "papers"),
        "DOIGET_LOG_PATH": str(root / "provenance.jsonl"),
        "DOIGET_CONFIG": str(root / "config.toml"),
        "REDIS_URL": redis_url,
        "BRAVE_API_KEY": "brave-replica-key-123",
        # Replicas seal what they share in Redis with one key.
        "DOIGET_CACHE_KEY": "replicas-share-this-sealing-key-0123",
        "DOIGET_HTTP_TOKENS_FILE": str(tokens),
    }


async def test_two_replicas_share_sessions_cache_and_the_rate_budget(
    doiget_env: dict[str, str],
    tmp_path: Path,
    upstream: ReplayUpstream,
    redis_server: RedisServer,
) -> None:
    upstream.json(*BRAVE, BRAVE_ANSWER)
    tokens = token_file(tmp_path, TOKEN)
    envs = [
        replica_env(doiget_env, tmp_path / name, redis_server.url, tokens)
        for name in ("one", "two")
    ]
    dois = [[f"10.5555/replica-{side}-{n}" for n in range(5)] for side in ("a", "b")]
    batches: list[Any] = [None, None]
    with http_server(envs[0], tmp_path) as one, http_server(envs[1], tmp_path) as two:
        async with http_session(one.url) as first, http_session(two.url) as second:
            step = await first.call_tool(
                "sequential_search",
                {"searchStep": "Survey graphene", "stepNumber": 1, "nextStepNeeded": True},
            )
            sid = (step.structured_content or {})["sessionId"]
            read = await second.call_tool("get_research_session", {"sessionId": sid})
            searched = await first.call_tool("web_search", {"query": "graphene"})
            cached = await second.call_tool("web_search", {"query": "graphene"})

            async def batch(index: int, session: Any) -> None:
                batches[index] = await session.call_tool(
                    "doiget_batch_fetch", {"refs": dois[index]}
                )

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(batch, 0, first)
                tasks.start_soon(batch, 1, second)
        ready = httpx.get(f"{two.base}/readyz", timeout=10).json()
        redis_server.stop()
        down = httpx.get(f"{one.base}/readyz", timeout=10)
    assert ready == {"ready": True, "checks": {"store": True, "log": True, "redis": True}}
    assert down.status_code == 503 and down.json()["checks"]["redis"] is False
    assert not read.is_error and read.structured_content is not None
    assert read.structured_content["sessionId"] == sid
    assert searched.meta is not None and searched.meta["cached"] is False
    assert cached.meta is not None and cached.meta["cached"] is True
    assert len(upstream.requests_to(BRAVE[0])) == 1
    for outcome in batches:
        rows = outcome.structured_content["results"]
        assert [row["error"]["code"] for row in rows] == ["NOT_FOUND"] * 5
    starts = [r.started for r in upstream.requests_to("api.crossref.org")]
    assert len(starts) == 10
    # 200 ms between requests to one source and 5 a second, across both replicas
    # (a few ms of slack for the clocks of two processes and the replay's).
    assert min_gap(starts) >= 0.19
    assert breaches_of_window(starts, 5, 0.98) == 0
