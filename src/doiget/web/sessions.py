"""Where research sessions live: sealed files on disk, or Redis when REDIS_URL is set.

A session is one JSON document (its goal, steps, gaps and sources) sealed with the
web cache's :class:`~doiget.web.cache.Sealer` and secret, so nothing an agent
researched is readable at rest and a stored name does not reveal the session id
(names are HMACs of it). Each write stamps the document with the time and the
idle time to live, so a session lives :data:`SESSION_TTL` seconds after its last
update; a read of an older one finds nothing.

Caps: :data:`MAX_SESSIONS` live sessions per store. Creating one more evicts the
session idle the longest (an agent that started a new session has most likely
abandoned the oldest one; refusing would block it until a TTL runs out).

Updates are read-modify-write under a per-session lock, so concurrent tool calls
in one process never lose each other's changes; the Redis store also watches the
key, so calls in other processes sharing the Redis retry instead of overwriting.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

import anyio
import anyio.to_thread

from doiget.atomicfile import write_atomic
from doiget.errors import DoigetError
from doiget.web.cache import CacheEntry, Sealer, cache_secret
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from doiget.config import Settings

logger = logging.getLogger("doiget.web.sessions")

Clock = Callable[[], float]
Session = dict[str, Any]
T = TypeVar("T")

SESSION_TTL: Final = 4 * 3600.0
MAX_SESSIONS: Final = 50
DIR_NAME: Final = "research-sessions"
REDIS_PREFIX: Final = "doiget:research:"
# Part of every sealed session's associated data and storage name: a cache entry
# can never be read as a session or land on a session's name.
_KEY_PREFIX: Final = "research-session\x00"
# How often an update whose Redis key changed under it is tried again.
_WATCH_TRIES: Final = 10
# A temp file left by a writer that died is removed after this many seconds.
_STALE_TEMP: Final = 3600.0


def session_missing(session_id: str) -> DoigetError:
    """The error for a session that expired, was evicted or never existed."""
    return web_error(
        Kind.NOT_FOUND,
        f"research session {session_id} expired or does not exist; start a new one with "
        "sequential_search step 1",
        suggested_action="Sessions last 4 hours after their last update. Call "
        "sequential_search with stepNumber 1 and no sessionId to start a new one.",
    )


class SessionStore(Protocol):
    """What research sessions need from storage; both backends satisfy it."""

    async def create(self, session_id: str, session: Session) -> None:
        """Store a new session (evicting the longest-idle one beyond the cap)."""
        ...

    async def load(self, session_id: str) -> Session | None:
        """The live session, else None (missing, expired, or unreadable)."""
        ...

    async def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Apply ``change`` to the stored session and write it back, refreshing its TTL.

        ``change`` edits the session in place and returns what the caller wants back;
        if it raises, nothing is written. A missing session raises NOT_FOUND.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class _Sealed:
    """Sealing, naming and per-session locks shared by both backends."""

    def __init__(self, secret: bytes, clock: Clock, ttl: float, max_sessions: int) -> None:
        self._sealer = Sealer(secret)
        self._clock = clock
        self._ttl = ttl
        self._max_sessions = max_sessions
        self._locks: dict[str, anyio.Lock] = {}
        self._creating = anyio.Lock()

    def name(self, session_id: str) -> str:
        """The storage name of a session: an HMAC of its id."""
        return self._sealer.name(_KEY_PREFIX + session_id)

    def _seal(self, session_id: str, session: Session, now: float) -> bytes:
        value = json.dumps(session, ensure_ascii=False, sort_keys=True).encode("utf-8")
        return self._sealer.seal(_KEY_PREFIX + session_id, CacheEntry(value, now, self._ttl))

    def _unseal(self, session_id: str, blob: bytes) -> Session | None:
        entry = self._sealer.open(_KEY_PREFIX + session_id, blob)
        if entry is None or entry.expired(self._clock()):
            return None
        try:
            session = json.loads(entry.value)
        except ValueError:
            return None
        return session if isinstance(session, dict) else None

    @asynccontextmanager
    async def _locked(self, session_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(session_id, anyio.Lock())
        try:
            async with lock:
                yield
        finally:
            # Forget the lock once nobody holds or awaits it, so ids do not pile up.
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locks.pop(session_id, None)


# How long an update waits for another process holding the same session.
LOCK_SECONDS: Final = 10.0


class DiskSessionStore(_Sealed):
    """One sealed file per session in a private directory.

    A file's modification time is set to its last update (by the store's clock),
    so finding expired and longest-idle sessions needs no decryption; a read trusts
    only the sealed header.
    """

    def __init__(
        self,
        directory: Path,
        secret: bytes,
        clock: Clock = time.time,
        *,
        ttl: float = SESSION_TTL,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        super().__init__(secret, clock, ttl, max_sessions)
        self._directory = directory

    def path_for(self, session_id: str) -> Path:
        """The file that holds a session."""
        return self._directory / self.name(session_id)

    async def create(self, session_id: str, session: Session) -> None:
        """Write a new session's file after making room for it."""
        async with self._creating:
            await anyio.to_thread.run_sync(self._create_blocking, session_id, session)

    async def load(self, session_id: str) -> Session | None:
        """The live session, else None (expired files go in the sweep before a create)."""
        return await anyio.to_thread.run_sync(self._load_blocking, session_id)

    async def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Read, change and rewrite a session under its lock.

        The lock is held in this process (an anyio lock) and across processes (a lock
        file beside the session), since the CLI and a server may share the folder.
        """
        import filelock

        async with self._locked(session_id):
            if not self._directory.is_dir():
                raise session_missing(session_id)
            between_processes = filelock.FileLock(
                str(self._directory / f".{self.name(session_id)}.lock"),
                timeout=LOCK_SECONDS,
                thread_local=False,
            )
            try:
                await anyio.to_thread.run_sync(between_processes.acquire)
            except filelock.Timeout as exc:
                raise web_error(
                    Kind.TIMEOUT,
                    f"research session {session_id} is being updated by another process; "
                    "retry in a moment.",
                ) from exc
            try:
                session = await self.load(session_id)
                if session is None:
                    raise session_missing(session_id)
                result = change(session)
                await anyio.to_thread.run_sync(self._write_blocking, session_id, session)
                return result
            finally:
                between_processes.release()

    async def aclose(self) -> None:
        """Nothing to release: files are opened per call."""

    def _create_blocking(self, session_id: str, session: Session) -> None:
        try:
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._directory.chmod(0o700)
        except OSError as exc:
            raise self._unwritable(exc) from exc
        self._make_room()
        self._write_blocking(session_id, session)

    def _make_room(self) -> None:
        """Remove expired sessions, then the longest idle until one more fits."""
        now = self._clock()
        live: list[tuple[float, Path]] = []
        with contextlib.suppress(OSError):
            for path in self._directory.iterdir():
                try:
                    info = path.stat()
                except OSError:
                    continue
                if path.name.startswith("."):
                    if path.name.endswith(".tmp") and time.time() - info.st_mtime > _STALE_TEMP:
                        _remove(path)
                    continue
                if info.st_mtime + self._ttl <= now:
                    _remove_session_files(path)
                else:
                    live.append((info.st_mtime, path))
        live.sort()
        while live and len(live) >= self._max_sessions:
            _, path = live.pop(0)
            logger.info(
                "research sessions: cap of %d reached, evicting the longest idle",
                self._max_sessions,
            )
            _remove_session_files(path)

    def _load_blocking(self, session_id: str) -> Session | None:
        path = self.path_for(session_id)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("research sessions: cannot read %s: %s", path, exc)
            return None
        # An unreadable file may belong to a process with another key: it is left for
        # the expiry sweep, never deleted on sight.
        return self._unseal(session_id, blob)

    def _write_blocking(self, session_id: str, session: Session) -> None:
        now = self._clock()
        path = self.path_for(session_id)
        try:
            # write_atomic's temp file comes from mkstemp, hence already mode 0600.
            write_atomic(path, self._seal(session_id, session, now))
            os.utime(path, (now, now))
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _unwritable(self, exc: OSError) -> DoigetError:
        return web_error(
            Kind.INTERNAL,
            f"cannot save the research session under {self._directory}: {exc.strerror or exc}.",
            suggested_action="Make DOIGET_DATA_DIR writable (and not full), then retry.",
        )


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


class RedisSessionStore(_Sealed):
    """Sealed sessions in Redis under ``prefix + name``, expiring with ``SET ... EX``.

    A sorted set ``prefix + "index"`` scores each session's name by its last update,
    which is how the longest-idle session is found when the cap is reached. Unlike
    the web cache, a session store that cannot be reached fails the call: the
    research trail is the point of these tools.
    """

    def __init__(
        self,
        url: str,
        secret: bytes,
        clock: Clock = time.time,
        *,
        prefix: str = REDIS_PREFIX,
        ttl: float = SESSION_TTL,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        from redis.asyncio import from_url

        super().__init__(secret, clock, ttl, max_sessions)
        self._prefix = prefix
        self._index = prefix + "index"
        self._client: Redis = from_url(url, socket_connect_timeout=2.0, socket_timeout=5.0)

    def redis_key(self, session_id: str) -> str:
        """The Redis key that holds a session."""
        return self._prefix + self.name(session_id)

    async def create(self, session_id: str, session: Session) -> None:
        """Store a new session after evicting expired and, beyond the cap, idle ones."""
        from redis.exceptions import RedisError

        now = self._clock()
        blob = self._seal(session_id, session, now)
        try:
            async with self._creating:
                await self._client.zremrangebyscore(self._index, "-inf", now - self._ttl)
                excess = int(await self._client.zcard(self._index)) - self._max_sessions + 1
                if excess > 0:
                    oldest = [
                        name.decode() if isinstance(name, bytes) else str(name)
                        for name in await self._client.zrange(self._index, 0, excess - 1)
                    ]
                    if oldest:
                        logger.info("research sessions: cap reached, evicting %d", len(oldest))
                        await self._client.delete(*(self._prefix + name for name in oldest))
                        await self._client.zrem(self._index, *oldest)
                async with self._client.pipeline(transaction=True) as pipe:
                    pipe.set(self.redis_key(session_id), blob, ex=math.ceil(self._ttl))
                    pipe.zadd(self._index, {self.name(session_id): now})
                    await pipe.execute()
        except (RedisError, OSError) as exc:
            raise _redis_down(exc) from exc

    async def load(self, session_id: str) -> Session | None:
        """The live session, else None."""
        from redis.exceptions import RedisError

        try:
            blob = await self._client.get(self.redis_key(session_id))
        except (RedisError, OSError) as exc:
            raise _redis_down(exc) from exc
        return self._unseal(session_id, blob) if isinstance(blob, bytes) else None

    async def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Read, change and rewrite a session; retried if another writer got there first."""
        from redis.exceptions import RedisError, WatchError

        key = self.redis_key(session_id)
        async with self._locked(session_id):
            try:
                async with self._client.pipeline(transaction=True) as pipe:
                    for _ in range(_WATCH_TRIES):
                        try:
                            await pipe.watch(key)
                            blob = await pipe.get(key)
                            session = (
                                self._unseal(session_id, blob) if isinstance(blob, bytes) else None
                            )
                            if session is None:
                                raise session_missing(session_id)
                            result = change(session)
                            now = self._clock()
                            pipe.multi()  # type: ignore[no-untyped-call]
                            pipe.set(
                                key, self._seal(session_id, session, now), ex=math.ceil(self._ttl)
                            )
                            pipe.zadd(self._index, {self.name(session_id): now})
                            await pipe.execute()
                            return result
                        except WatchError:
                            continue
            except (RedisError, OSError) as exc:
                raise _redis_down(exc) from exc
        raise web_error(
            Kind.UPSTREAM,
            f"research session {session_id} kept changing under other calls; it was not updated.",
            suggested_action="Retry the call.",
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        from redis.exceptions import RedisError

        try:
            await self._client.aclose()
        except (RedisError, OSError) as exc:
            logger.debug("research sessions: closing redis failed: %s", exc)


def _redis_down(exc: Exception) -> DoigetError:
    return web_error(
        Kind.NETWORK,
        f"the research session store (Redis, REDIS_URL) did not answer: {type(exc).__name__}.",
        suggested_action="Retry in a few seconds; if it persists, check that Redis is running.",
    )


def open_session_store(settings: Settings, clock: Clock = time.time) -> SessionStore:
    """Redis when REDIS_URL is set, else sealed files under ``data_dir/research-sessions``."""
    secret = cache_secret(settings)
    if settings.redis_url:
        return RedisSessionStore(settings.redis_url, secret, clock)
    return DiskSessionStore(settings.data_dir / DIR_NAME, secret, clock)


def _remove_session_files(path: Path) -> None:
    """A session's file and its cross-process lock file."""
    _remove(path)
    _remove(path.with_name(f".{path.name}.lock"))
