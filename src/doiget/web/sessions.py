"""Where research sessions live: sealed files on disk, or Redis when REDIS_URL is set.

A session is one JSON document (its goal, steps, gaps and sources) kept in the
sealed storage of :mod:`doiget.web.storage` under the web cache's secret, so nothing
an agent researched is readable at rest and a stored name does not reveal the
session id. Each write stamps the document with the time and the idle time to
live, so a session lives :data:`SESSION_TTL` seconds after its last update; a read
of an older one finds nothing.

Sessions belong to their owner (:mod:`doiget.owner`: the token over HTTP, one local
owner otherwise). The owner is part of every session's key, so another owner asking
for the id finds nothing, exactly as for an id that never existed, and each owner has
its own folder (``research-sessions-by-token/<name>``, the local owner keeps
``research-sessions``) or Redis prefix, named by a keyed hash of the owner.

Caps: :data:`MAX_SESSIONS` live sessions per owner. Creating one more evicts that
owner's session idle the longest (an agent that started a new session has most
likely abandoned the oldest one; refusing would block it until a TTL runs out);
another owner's sessions are never touched.

Updates are read-modify-write under a per-session lock, so concurrent tool calls
in one process never lose each other's changes; across processes the disk store
holds a lock file and the Redis store watches the key, so calls in other processes
wait or retry instead of overwriting.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

import anyio
import anyio.to_thread

from doiget.errors import DoigetError
from doiget.owner import LOCAL, current_owner
from doiget.web.failure import Kind, web_error
from doiget.web.storage import (
    CacheEntry,
    Clock,
    SealedFiles,
    SealedRedis,
    Sealer,
    expiry_seconds,
    redis_errors,
    storage_secret,
)

if TYPE_CHECKING:
    from doiget.config import Settings

logger = logging.getLogger("doiget.web.sessions")

Session = dict[str, Any]
T = TypeVar("T")

SESSION_TTL: Final = 4 * 3600.0
MAX_SESSIONS: Final = 50
DIR_NAME: Final = "research-sessions"
# Beside DIR_NAME: one folder per owner other than the local one.
OWNERS_SUFFIX: Final = "-by-token"
REDIS_PREFIX: Final = "doiget:research:"
# Part of every sealed session's associated data and storage name: a cache entry
# can never be read as a session or land on a session's name.
_KEY_PREFIX: Final = "research-session\x00"
_OWNER_PREFIX: Final = "research-owner\x00"
# How often an update whose Redis key changed under it is tried again.
_WATCH_TRIES: Final = 10


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


class _Sessions:
    """Sealing, naming and per-session locks shared by both backends."""

    def __init__(self, clock: Clock, ttl: float, max_sessions: int, sealer: Sealer) -> None:
        self._clock = clock
        self._ttl = ttl
        self._max_sessions = max_sessions
        self._sealer = sealer
        self._locks: dict[str, anyio.Lock] = {}
        self._creating = anyio.Lock()

    def _owner_name(self, owner: str) -> str:
        """The name of an owner's folder or Redis prefix (a keyed hash, not the token id)."""
        return self._sealer.name(_OWNER_PREFIX + owner)[:32]

    def _entry(self, session: Session) -> CacheEntry:
        value = json.dumps(session, ensure_ascii=False, sort_keys=True).encode("utf-8")
        return CacheEntry(value, self._clock(), self._ttl)

    @asynccontextmanager
    async def _locked(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, anyio.Lock())
        try:
            async with lock:
                yield
        finally:
            # Forget the lock once nobody holds or awaits it, so ids do not pile up.
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locks.pop(key, None)


def _key(session_id: str) -> str:
    """The storage key of the current owner's session ``session_id``: bound to the
    owner, and a cache entry can never be read as one."""
    owner = current_owner()
    return _KEY_PREFIX + (f"{owner}\x00" if owner != LOCAL else "") + session_id


def _session(entry: CacheEntry | None) -> Session | None:
    if entry is None:
        return None
    try:
        session = json.loads(entry.value)
    except ValueError:
        return None
    return session if isinstance(session, dict) else None


# Present in a session directory whose files are dated by their expiry.
EXPIRY_DATED_MARKER: Final = ".dated-by-expiry"
# How long an update waits for another process holding the same session.
LOCK_SECONDS: Final = 10.0


class DiskSessionStore(_Sessions):
    """One sealed file per session in a private directory, dated by its expiry, so
    finding expired and longest-idle sessions needs no decryption.

    A file that does not open may belong to a process with another key: it is left
    for the expiry sweep, never deleted on sight.
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
        super().__init__(clock, ttl, max_sessions, Sealer(secret))
        self._directory = directory
        self._by_owner: dict[str, SealedFiles] = {}

    def _files(self) -> SealedFiles:
        """The current owner's folder."""
        owner = current_owner()
        files = self._by_owner.get(owner)
        if files is None:
            directory = self._directory
            if owner != LOCAL:
                owners = directory.with_name(directory.name + OWNERS_SUFFIX)
                directory = owners / self._owner_name(owner)
            files = self._by_owner[owner] = SealedFiles(directory, self._sealer, self._clock)
        return files

    def path_for(self, session_id: str) -> Path:
        """The file that holds the current owner's session."""
        return self._files().path_for(_key(session_id))

    async def create(self, session_id: str, session: Session) -> None:
        """Write a new session's file after making room for it."""
        files, key = self._files(), _key(session_id)
        async with self._creating:
            await anyio.to_thread.run_sync(self._create_blocking, files, key, session)

    async def load(self, session_id: str) -> Session | None:
        """The live session, else None."""
        read = partial(self._files().read, _key(session_id), tidy=False)
        return _session(await anyio.to_thread.run_sync(read))

    async def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Read, change and rewrite a session under its lock.

        The lock is held in this process (an anyio lock) and across processes (a lock
        file beside the session), since the CLI and a server may share the folder.
        """
        files, key = self._files(), _key(session_id)
        async with self._locked(key):
            if not files.directory.is_dir():
                raise session_missing(session_id)
            try:
                async with files.locked(key, LOCK_SECONDS):
                    session = await self.load(session_id)
                    if session is None:
                        raise session_missing(session_id)
                    result = change(session)
                    await anyio.to_thread.run_sync(self._write_blocking, files, key, session)
                    return result
            except TimeoutError as exc:
                raise web_error(
                    Kind.TIMEOUT,
                    f"research session {session_id} is being updated by another process; "
                    "retry in a moment.",
                ) from exc

    async def aclose(self) -> None:
        """Nothing to release: files are opened per call."""

    def _create_blocking(self, files: SealedFiles, key: str, session: Session) -> None:
        try:
            files.make_directory()
        except OSError as exc:
            raise self._unwritable(files, exc) from exc
        self._redate_idle_dated_files(files)
        # Room for one more: expired sessions go first, then the longest idle.
        swept = files.sweep(max_files=self._max_sessions - 1)
        if swept.evicted:
            logger.info(
                "research sessions: cap of %d reached, evicting the %d longest idle",
                self._max_sessions,
                swept.evicted,
            )
        self._write_blocking(files, key, session)

    def _redate_idle_dated_files(self, files: SealedFiles) -> None:
        """Date files written by earlier versions (stamped with their last update) by
        their expiry, once, so the sweep never takes a live session for an expired one.

        A marker in the directory says its files are dated by expiry; a directory
        without it is re-dated file by file (last update + time to live), then marked.
        """
        marker = files.directory / EXPIRY_DATED_MARKER
        if marker.exists():
            return
        for path in files.directory.iterdir():
            if path.name.startswith(".") or not path.is_file():
                continue
            try:
                updated = path.stat().st_mtime
                os.utime(path, (updated + self._ttl, updated + self._ttl))
            except OSError as exc:
                logger.warning("cannot re-date research session file %s: %s", path, exc)
                return
        marker.touch()

    def _write_blocking(self, files: SealedFiles, key: str, session: Session) -> None:
        try:
            files.write(key, self._entry(session))
        except OSError as exc:
            raise self._unwritable(files, exc) from exc

    @staticmethod
    def _unwritable(files: SealedFiles, exc: OSError) -> DoigetError:
        return web_error(
            Kind.INTERNAL,
            f"cannot save the research session under {files.directory}: {exc.strerror or exc}.",
            suggested_action="Make DOIGET_DATA_DIR writable (and not full), then retry.",
        )


class RedisSessionStore(_Sessions):
    """Sealed sessions in Redis under ``prefix + name``, expiring with ``SET ... EX``.

    A sorted set ``prefix + "index"`` scores each session's name by its last update,
    which is how the longest-idle session is found when the cap is reached. An owner
    other than the local one has the prefix ``prefix + <owner name> + ":"``. Unlike
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
        super().__init__(clock, ttl, max_sessions, Sealer(secret))
        self._redis = SealedRedis(
            url, self._sealer, clock, prefix=prefix, connect_timeout=2.0, read_timeout=5.0
        )
        self._client = self._redis.client
        self._prefix = prefix

    def _owner_prefix(self) -> str:
        """The prefix of the current owner's keys."""
        owner = current_owner()
        return self._prefix if owner == LOCAL else f"{self._prefix}{self._owner_name(owner)}:"

    def redis_key(self, session_id: str) -> str:
        """The Redis key that holds the current owner's session."""
        return self._owner_prefix() + self._name(session_id)

    def _name(self, session_id: str) -> str:
        return self._sealer.name(_key(session_id))

    async def create(self, session_id: str, session: Session) -> None:
        """Store a new session after evicting expired and, beyond the cap, idle ones."""
        entry = self._entry(session)
        now = entry.stored_at
        prefix = self._owner_prefix()
        index = prefix + "index"
        try:
            async with self._creating:
                await self._client.zremrangebyscore(index, "-inf", now - self._ttl)
                excess = int(await self._client.zcard(index)) - self._max_sessions + 1
                if excess > 0:
                    oldest = [
                        name.decode() if isinstance(name, bytes) else str(name)
                        for name in await self._client.zrange(index, 0, excess - 1)
                    ]
                    if oldest:
                        logger.info("research sessions: cap reached, evicting %d", len(oldest))
                        await self._client.delete(*(prefix + name for name in oldest))
                        await self._client.zrem(index, *oldest)
                async with self._client.pipeline(transaction=True) as pipe:
                    pipe.set(
                        prefix + self._name(session_id),
                        self._redis.seal(_key(session_id), entry),
                        ex=expiry_seconds(self._ttl),
                    )
                    pipe.zadd(index, {self._name(session_id): now})
                    await pipe.execute()
        except redis_errors() as exc:
            raise _redis_down(exc) from exc

    async def load(self, session_id: str) -> Session | None:
        """The live session, else None."""
        try:
            blob = await self._client.get(self.redis_key(session_id))
        except redis_errors() as exc:
            raise _redis_down(exc) from exc
        return _session(self._redis.unseal(_key(session_id), blob))

    async def update(self, session_id: str, change: Callable[[Session], T]) -> T:
        """Read, change and rewrite a session; retried if another writer got there first."""
        from redis.exceptions import WatchError

        key = self.redis_key(session_id)
        index = self._owner_prefix() + "index"
        async with self._locked(key):
            try:
                async with self._client.pipeline(transaction=True) as pipe:
                    for _ in range(_WATCH_TRIES):
                        try:
                            await pipe.watch(key)
                            blob = await pipe.get(key)
                            session = _session(self._redis.unseal(_key(session_id), blob))
                            if session is None:
                                raise session_missing(session_id)
                            result = change(session)
                            entry = self._entry(session)
                            pipe.multi()  # type: ignore[no-untyped-call]
                            pipe.set(
                                key,
                                self._redis.seal(_key(session_id), entry),
                                ex=expiry_seconds(self._ttl),
                            )
                            pipe.zadd(index, {self._name(session_id): entry.stored_at})
                            await pipe.execute()
                            return result
                        except WatchError:
                            continue
            except redis_errors() as exc:
                raise _redis_down(exc) from exc
        raise web_error(
            Kind.UPSTREAM,
            f"research session {session_id} kept changing under other calls; it was not updated.",
            suggested_action="Retry the call.",
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()


def _redis_down(exc: Exception) -> DoigetError:
    return web_error(
        Kind.NETWORK,
        f"the research session store (Redis, REDIS_URL) did not answer: {type(exc).__name__}.",
        suggested_action="Retry in a few seconds; if it persists, check that Redis is running.",
    )


def open_session_store(settings: Settings, clock: Clock = time.time) -> SessionStore:
    """Redis when REDIS_URL is set, else sealed files under ``data_dir/research-sessions``."""
    secret = storage_secret(settings)
    if settings.redis_url:
        return RedisSessionStore(settings.redis_url, secret, clock)
    return DiskSessionStore(settings.data_dir / DIR_NAME, secret, clock)
