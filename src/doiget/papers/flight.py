"""One fetch of a ref at a time, across processes and replicas (single flight).

Two agents asking for the same paper at once would download it twice and race to
store it. A fetch holds the ref's flight first: in Redis when ``REDIS_URL`` is set
(replicas on several machines), else a lock file in the data directory (processes on
one machine). A fetch that had to wait finds the paper stored by the one it waited
for, and answers from the store instead of downloading again.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final, Protocol

import anyio

from doiget.errors import DoigetError, ErrorCode

# Longer than any fetch may take (its own deadline is PDF + 2 x API timeouts); a
# holder that died lets go after this many seconds.
HOLD_SECONDS: Final = 900.0


class Flights(Protocol):
    """Where flights are held."""

    def hold(self, key: str) -> contextlib.AbstractAsyncContextManager[bool]:
        """Hold ``key``'s flight; yields whether another holder had to be waited for."""
        ...

    async def aclose(self) -> None:
        """Let go of connections."""
        ...


def _waited_too_long(key: str) -> DoigetError:
    return DoigetError(
        ErrorCode.LOCK_TIMEOUT,
        f"another doiget is still fetching {key} after {HOLD_SECONDS:g} s; try again later.",
    )


class FileFlights:
    """Flights as lock files under ``directory`` (``flock``: one machine, or a file
    system where flock works across machines)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[bool]:
        from filelock import FileLock, Timeout

        self.directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.directory / f"{key}.lock"), thread_local=False)
        waited = False
        try:
            lock.acquire(timeout=0)
        except Timeout:
            waited = True
            try:
                await anyio.to_thread.run_sync(lambda: lock.acquire(timeout=HOLD_SECONDS))
            except Timeout:
                raise _waited_too_long(key) from None
        try:
            yield waited
        finally:
            lock.release()

    async def aclose(self) -> None:
        return None


class RedisFlights:
    """Flights as Redis locks (expiring, so a crashed holder cannot block forever)."""

    def __init__(self, url: str) -> None:
        import redis.asyncio

        self._client: Any = redis.asyncio.from_url(url)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[bool]:
        from redis.exceptions import LockError

        lock = self._client.lock(f"doiget:flight:{key}", timeout=HOLD_SECONDS)
        waited = not await lock.acquire(blocking=False)
        if waited and not await lock.acquire(blocking=True, blocking_timeout=HOLD_SECONDS):
            raise _waited_too_long(key)
        try:
            yield waited
        finally:
            with contextlib.suppress(LockError):  # expired while held: nothing to free
                await lock.release()

    async def aclose(self) -> None:
        await self._client.aclose()


def flights_for(redis_url: str | None, data_dir: Path) -> Flights:
    """The flights every doiget with these settings shares."""
    if redis_url:
        return RedisFlights(redis_url)
    return FileFlights(data_dir / "flights")
