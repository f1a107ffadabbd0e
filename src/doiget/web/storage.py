"""Sealed storage shared by the web cache and the research sessions: disk or Redis.

Whatever leaves the process (disk files, Redis values) is sealed with AES-256-GCM by
:class:`Sealer`: ``nonce (12 bytes) || AESGCM(header || value)``, the header being
the entry's ``stored_at`` and ``ttl``. The entry's full key is the associated data,
so a sealed value moved to another key's slot fails authentication and reads as
missing; storage names are HMACs of the key, so a name cannot be checked against a
guessed query, URL or session id.

Two places hold sealed entries, one entry per key:

- :class:`SealedFiles`: one file per entry in a private directory (0700, files
  0600), written atomically. A file's modification time is its expiry time, so
  :meth:`SealedFiles.sweep` finds expired and soonest-expiring entries by ``stat``
  alone; a read trusts only the sealed header.
- :class:`SealedRedis`: one Redis key per entry, ``prefix + name``, set to expire
  with the entry (``EX`` is rounded up to whole seconds; the sealed ttl is exact).

Both raise what their medium raises (``OSError``, :data:`redis_errors`); each user
decides what a failure means (the cache: a miss; a session: an error).
``cryptography``, ``filelock`` and ``redis`` are imported where first used, so
starting the server does not pay for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import math
import os
import struct
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio.to_thread

from doiget.atomicfile import create_once, write_atomic
from doiget.confined import read_confined
from doiget.errors import DoigetError, ErrorCode

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from redis.asyncio import Redis

    from doiget.config import Settings

logger = logging.getLogger("doiget.web.storage")

Clock = Callable[[], float]

KEY_BYTES: Final = 32
NONCE_BYTES: Final = 12
KEY_FILE_NAME: Final = "web-cache.key"
# Bumping this invalidates every sealed value: it is part of the associated data.
_SEAL_FORMAT: Final = b"doiget-web-cache/1\x00"
_HEADER: Final = struct.Struct(">dd")  # stored_at, ttl
_HKDF_INFO: Final = b"doiget web cache key v1"
# A temp file left by a writer that died is removed after this many seconds.
STALE_TEMP_SECONDS: Final = 3600.0


@dataclass(frozen=True)
class CacheEntry:
    """One stored value with when it was stored and for how long it is valid."""

    value: bytes
    stored_at: float
    ttl: float

    @property
    def expires_at(self) -> float:
        """The clock time from which the entry is no longer returned."""
        return self.stored_at + self.ttl

    def age(self, now: float) -> float:
        """Seconds since the entry was stored (never negative, even if clocks step back)."""
        return max(0.0, now - self.stored_at)

    def expired(self, now: float) -> bool:
        """Whether the entry's time to live has run out at ``now``."""
        return now >= self.expires_at


class Sealer:
    """Seals entries for storage outside the process and opens them again.

    :meth:`open` returns None for anything that does not authenticate: a wrong key,
    a tampered or truncated blob, or a blob sealed for another key.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"the web cache key must be {KEY_BYTES} bytes, not {len(key)}")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead: AESGCM = AESGCM(key)
        # A separate key for storage names, so a name cannot be checked against a guess.
        self._names = hashlib.sha256(b"doiget-web-cache-names\x00" + key).digest()

    def name(self, key: str) -> str:
        """The storage name of ``key``: an HMAC, not a plain hash."""
        return hmac.new(self._names, key.encode(), hashlib.sha256).hexdigest()

    def seal(self, key: str, entry: CacheEntry) -> bytes:
        """``nonce || ciphertext`` of ``entry``, bound to ``key``."""
        nonce = os.urandom(NONCE_BYTES)
        plaintext = _HEADER.pack(entry.stored_at, entry.ttl) + entry.value
        return nonce + self._aead.encrypt(nonce, plaintext, _SEAL_FORMAT + key.encode())

    def open(self, key: str, blob: bytes) -> CacheEntry | None:
        """The entry sealed in ``blob`` for ``key``, or None if it does not verify."""
        from cryptography.exceptions import InvalidTag

        if len(blob) < NONCE_BYTES:
            return None
        nonce, ciphertext = blob[:NONCE_BYTES], blob[NONCE_BYTES:]
        try:
            plaintext = self._aead.decrypt(nonce, ciphertext, _SEAL_FORMAT + key.encode())
        except InvalidTag:
            return None
        if len(plaintext) < _HEADER.size:
            return None
        stored_at, ttl = _HEADER.unpack_from(plaintext)
        return CacheEntry(plaintext[_HEADER.size :], stored_at, ttl)


# -- disk ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Swept:
    """What a sweep left: the live entries, and how many live ones it evicted."""

    live: int
    evicted: int


class SealedFiles:
    """Sealed entries as files in one private directory (blocking calls: run them in a
    worker thread)."""

    def __init__(self, directory: Path, sealer: Sealer, clock: Clock = time.time) -> None:
        self.directory = directory
        self.sealer = sealer
        self._clock = clock

    def path_for(self, key: str) -> Path:
        """The file that holds ``key``'s entry."""
        return self.directory / self.sealer.name(key)

    def lock_path(self, key: str) -> Path:
        """The lock file that writers of ``key`` in several processes share."""
        return self.directory / f".{self.sealer.name(key)}.lock"

    def make_directory(self) -> None:
        """Create the directory, private (0700) even when it already existed."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkdir honours the umask and leaves an existing directory alone.
        self.directory.chmod(0o700)

    def read(self, key: str, *, tidy: bool) -> CacheEntry | None:
        """The live entry of ``key``, else None (a read error is logged).

        With ``tidy``, a file that does not open or has expired is removed on sight;
        without, it is left for :meth:`sweep` (a file that does not open may belong
        to a process with another key, and a writer may hold the entry's lock file).
        """
        path = self.path_for(key)
        try:
            blob = read_confined(self.directory, path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("cannot read %s: %s", path, exc)
            return None
        entry = self.sealer.open(key, blob)
        if entry is None or entry.expired(self._clock()):
            if tidy:
                _remove(path)
            return None
        return entry

    def write(self, key: str, entry: CacheEntry) -> None:
        """Write ``key``'s file atomically, dated by its expiry (raises ``OSError``)."""
        self.make_directory()
        path = self.path_for(key)
        # write_atomic's temp file comes from mkstemp, hence already mode 0600.
        write_atomic(path, self.sealer.seal(key, entry))
        os.utime(path, (entry.expires_at, entry.expires_at))

    def sweep(self, *, max_files: int, max_bytes: int | None = None) -> Swept:
        """Remove expired entries, then the soonest-expiring beyond the bounds.

        Only stats files; stale temp files of writers that died go too. Entries go
        with their lock files.
        """
        now = self._clock()
        live: list[tuple[float, int, Path]] = []
        try:
            children = list(self.directory.iterdir())
        except OSError:
            return Swept(0, 0)
        for path in children:
            try:
                info = path.stat()
            except OSError:
                continue
            if path.name.startswith("."):
                if path.name.endswith(".tmp") and time.time() - info.st_mtime > STALE_TEMP_SECONDS:
                    _remove(path)
                continue
            if info.st_mtime <= now:
                _remove_entry(path)
            else:
                live.append((info.st_mtime, info.st_size, path))
        live.sort()
        total = sum(size for _, size, _ in live)
        evicted = 0
        while live and (len(live) > max_files or (max_bytes is not None and total > max_bytes)):
            _, size, path = live.pop(0)
            _remove_entry(path)
            total -= size
            evicted += 1
        return Swept(len(live), evicted)

    @asynccontextmanager
    async def locked(self, key: str, timeout: float) -> AsyncIterator[None]:
        """Hold ``key``'s lock file, shared with other processes using the directory.

        Raises ``TimeoutError`` when another holder keeps it beyond ``timeout`` seconds.
        """
        import filelock

        lock = filelock.FileLock(str(self.lock_path(key)), timeout=timeout, thread_local=False)
        try:
            await anyio.to_thread.run_sync(lock.acquire)
        except filelock.Timeout as exc:
            raise TimeoutError(str(exc)) from exc
        try:
            yield
        finally:
            lock.release()


def _remove(path: Path) -> None:
    """Delete a file if possible; one that stays is only a wasted read later."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _remove_entry(path: Path) -> None:
    """An entry's file and its lock file."""
    _remove(path)
    _remove(path.with_name(f".{path.name}.lock"))


# -- Redis --------------------------------------------------------------------------


def redis_errors() -> tuple[type[Exception], ...]:
    """What a Redis call raises when Redis cannot answer."""
    from redis.exceptions import RedisError

    return (RedisError, OSError)


class SealedRedis:
    """Sealed entries in Redis under ``prefix + name``."""

    def __init__(
        self,
        url: str,
        sealer: Sealer,
        clock: Clock = time.time,
        *,
        prefix: str,
        connect_timeout: float,
        read_timeout: float,
        retry_once: bool = False,
    ) -> None:
        from redis.asyncio import from_url

        self.sealer = sealer
        self.prefix = prefix
        self._clock = clock
        if retry_once:
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            # One immediate retry (for a pooled connection that went stale), not
            # redis-py's default series of backed-off retries.
            self.client: Redis = from_url(
                url,
                socket_connect_timeout=connect_timeout,
                socket_timeout=read_timeout,
                retry=Retry(NoBackoff(), 1),
            )
        else:
            self.client = from_url(
                url, socket_connect_timeout=connect_timeout, socket_timeout=read_timeout
            )

    def redis_key(self, key: str) -> str:
        """The Redis key that holds ``key``'s entry."""
        return self.prefix + self.sealer.name(key)

    def seal(self, key: str, entry: CacheEntry) -> bytes:
        """``entry`` sealed for ``key``."""
        return self.sealer.seal(key, entry)

    def unseal(self, key: str, blob: object) -> CacheEntry | None:
        """The live entry in a value read for ``key`` (None: no value, or not ours)."""
        # The client does not decode responses, so a value is bytes (None: no key).
        if not isinstance(blob, bytes):
            return None
        entry = self.sealer.open(key, blob)
        if entry is None or entry.expired(self._clock()):
            return None
        return entry

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry of ``key``, else None."""
        return self.unseal(key, await self.client.get(self.redis_key(key)))

    async def set(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` to expire with it."""
        blob = self.seal(key, entry)
        await self.client.set(self.redis_key(key), blob, ex=expiry_seconds(entry.ttl))

    async def aclose(self) -> None:
        """Close the connection pool (a failure is only logged)."""
        try:
            await self.client.aclose()
        except redis_errors() as exc:
            logger.debug("closing redis failed: %s", exc)


def expiry_seconds(ttl: float) -> int:
    """A ttl as Redis's whole-second ``EX``, rounded up."""
    return math.ceil(ttl)


# -- the secret ---------------------------------------------------------------------


def _derive_key(passphrase: str) -> bytes:
    """32 bytes from any string, by HKDF-SHA256 (no salt, a fixed purpose label).

    HKDF spreads the input over the key but adds no work factor: a short
    passphrase stays guessable, so use a long random value for DOIGET_CACHE_KEY.
    """
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    hkdf = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=_HKDF_INFO)
    return hkdf.derive(passphrase.encode())


def _read_key_file(path: Path) -> bytes:
    key = read_confined(path.parent, path)
    if len(key) != KEY_BYTES:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"The web cache key file {path} holds {len(key)} bytes, not {KEY_BYTES}. "
            "Delete it (a new key is made and the old cache is ignored) or set "
            "DOIGET_CACHE_KEY.",
        )
    return key


def _key_file(path: Path) -> bytes:
    """The key in ``path``, made there once when it does not exist (of two processes
    racing to make it, exactly one key wins and both use it)."""
    try:
        return _read_key_file(path)
    except FileNotFoundError:
        pass
    create_once(path, os.urandom(KEY_BYTES))
    return _read_key_file(path)


def storage_secret(settings: Settings) -> bytes:
    """The 32-byte key that seals the web cache and the research sessions.

    From ``DOIGET_CACHE_KEY`` when set (any string, via HKDF-SHA256), else the key
    generated once into ``data_dir/web-cache.key``.
    """
    if settings.cache_key is not None:
        return _derive_key(settings.cache_key.reveal())
    return _key_file(settings.data_dir / KEY_FILE_NAME)
