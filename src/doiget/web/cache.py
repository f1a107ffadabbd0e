"""The web toolset's answer cache: in memory, encrypted on disk, or in Redis.

Every backend stores opaque bytes under a string key for a time to live and never
returns an expired entry. The cache is an optimisation only: a backend that cannot
read or write (a corrupt file, a full disk, Redis down) behaves as a miss or a
no-op, so a cache problem never fails a tool call.

Whatever leaves the process (disk files, Redis values) is sealed with AES-256-GCM by
:class:`Sealer`: ``nonce (12 bytes) || AESGCM(header || value)``, the header being
the entry's ``stored_at`` and ``ttl``. The full cache key is the associated data, so
a sealed value moved to another key's slot fails authentication and reads as a miss.

``cryptography`` and ``redis`` are imported where they are first used, not here,
so that starting the server does not pay for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import math
import os
import struct
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import anyio.to_thread

from doiget.atomicfile import write_atomic
from doiget.errors import DoigetError, ErrorCode

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from redis.asyncio import Redis

    from doiget.config import Settings

logger = logging.getLogger("doiget.web.cache")

Clock = Callable[[], float]

KEY_BYTES: Final = 32
NONCE_BYTES: Final = 12
KEY_FILE_NAME: Final = "web-cache.key"
DISK_DIR_NAME: Final = "web-cache"
# Bumping this invalidates every sealed value: it is part of the associated data.
_SEAL_FORMAT: Final = b"doiget-web-cache/1\x00"
_HEADER: Final = struct.Struct(">dd")  # stored_at, ttl
_HKDF_INFO: Final = b"doiget web cache key v1"


@dataclass(frozen=True)
class CacheEntry:
    """One cached value with when it was stored and for how long it is valid."""

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


class Cache(Protocol):
    """What the web tools need from a cache; every backend satisfies it."""

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None (missing, expired or unreadable)."""
        ...

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds (best effort)."""
        ...

    async def aclose(self) -> None:
        """Release connections or handles."""
        ...


class Sealer:
    """Seals cache entries for storage outside the process and opens them again.

    The one encryption scheme of the disk and Redis backends (see the module
    docstring). :meth:`open` returns None for anything that does not authenticate:
    a wrong key, a tampered or truncated blob, or a blob sealed for another key.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"the web cache key must be {KEY_BYTES} bytes, not {len(key)}")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead: AESGCM = AESGCM(key)
        # A separate key for storage names, so a file or Redis key name cannot be
        # checked against a guessed query or URL.
        self._names = hashlib.sha256(b"doiget-web-cache-names\x00" + key).digest()

    def name(self, cache_key: str) -> str:
        """The storage name of ``cache_key``: an HMAC, not a plain hash."""
        return hmac.new(self._names, cache_key.encode(), hashlib.sha256).hexdigest()

    def seal(self, cache_key: str, entry: CacheEntry) -> bytes:
        """``nonce || ciphertext`` of ``entry``, bound to ``cache_key``."""
        nonce = os.urandom(NONCE_BYTES)
        plaintext = _HEADER.pack(entry.stored_at, entry.ttl) + entry.value
        return nonce + self._aead.encrypt(nonce, plaintext, _SEAL_FORMAT + cache_key.encode())

    def open(self, cache_key: str, blob: bytes) -> CacheEntry | None:
        """The entry sealed in ``blob`` for ``cache_key``, or None if it does not verify."""
        from cryptography.exceptions import InvalidTag

        if len(blob) < NONCE_BYTES:
            return None
        nonce, ciphertext = blob[:NONCE_BYTES], blob[NONCE_BYTES:]
        try:
            plaintext = self._aead.decrypt(nonce, ciphertext, _SEAL_FORMAT + cache_key.encode())
        except InvalidTag:
            return None
        if len(plaintext) < _HEADER.size:
            return None
        stored_at, ttl = _HEADER.unpack_from(plaintext)
        return CacheEntry(plaintext[_HEADER.size :], stored_at, ttl)


class MemoryCache:
    """A process-local LRU bounded by entry count and total value bytes."""

    def __init__(
        self,
        max_entries: int = 512,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Clock = time.time,
    ) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._bytes = 0

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key`` (now the most recently used), else None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expired(self._clock()):
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` for ``ttl`` seconds, evicting the least recently used."""
        self.put(key, CacheEntry(value, self._clock(), ttl))

    def put(self, key: str, entry: CacheEntry) -> None:
        """Keep an existing ``entry`` as is, so its age and expiry stay true.

        A value larger than the whole byte budget, or one already expired, is not
        kept (it would only push every other entry out).
        """
        self._drop(key)
        if entry.expired(self._clock()) or len(entry.value) > self._max_bytes:
            return
        self._entries[key] = entry
        self._bytes += len(entry.value)
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    async def aclose(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.value)


class EncryptedDiskCache:
    """One sealed file per key under ``directory``, named by the key's SHA-256.

    Files are written atomically with mode 0600 in a 0700 directory. A file that
    does not open (corrupt, tampered, written under another key or another cache
    secret) or has expired reads as a miss and is removed.

    Size is bounded by pruning, which runs on :meth:`set` when ``prune_interval``
    seconds have passed since the last prune or when the writes since then could
    have taken the directory over ``max_files``. Pruning only stats files: each
    file's modification time is set to its expiry time, so expired files are
    found without decrypting them; if more than ``max_files`` files or
    ``max_bytes`` bytes remain, those expiring soonest go first. The modification
    time is only a hint for pruning: :meth:`get` trusts the sealed header alone.
    """

    def __init__(
        self,
        directory: Path,
        key: bytes,
        clock: Clock = time.time,
        *,
        max_files: int = 4096,
        max_bytes: int = 256 * 1024 * 1024,
        prune_interval: float = 300.0,
    ) -> None:
        self._directory = directory
        self._sealer = Sealer(key)
        self._clock = clock
        self._max_files = max_files
        self._max_bytes = max_bytes
        self._prune_interval = prune_interval
        self._last_prune: float | None = None
        self._writes_since_prune = 0
        self._files_at_prune = 0
        self._dir_ready = False

    def path_for(self, key: str) -> Path:
        """The file that holds ``key``'s entry."""
        return self._directory / self._sealer.name(key)

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None."""
        return await anyio.to_thread.run_sync(self._get_blocking, key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Write ``key``'s file (best effort: an OS error is logged, not raised)."""
        if ttl <= 0:
            return
        entry = CacheEntry(value, self._clock(), ttl)
        await anyio.to_thread.run_sync(self._set_blocking, key, entry)

    async def aclose(self) -> None:
        """Nothing to release: files are opened per call."""

    def prune(self) -> None:
        """Remove expired files, then the soonest-expiring beyond the size bounds.

        Blocking; :meth:`set` calls it from a worker thread when it is due.
        """
        now = self._clock()
        live: list[tuple[float, int, Path]] = []
        try:
            children = list(self._directory.iterdir())
        except OSError:
            return
        for path in children:
            try:
                info = path.stat()
            except OSError:
                continue
            if path.name.startswith("."):
                # A temp file left by a writer that died: stale after an hour.
                if path.name.endswith(".tmp") and time.time() - info.st_mtime > 3600:
                    _remove(path)
                continue
            if info.st_mtime <= now:
                _remove(path)
            else:
                live.append((info.st_mtime, info.st_size, path))
        live.sort()
        total = sum(size for _, size, _ in live)
        while live and (len(live) > self._max_files or total > self._max_bytes):
            _, size, path = live.pop(0)
            _remove(path)
            total -= size
        self._last_prune = now
        self._writes_since_prune = 0
        self._files_at_prune = len(live)

    def _ensure_dir(self) -> None:
        if self._dir_ready:
            return
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkdir honours the umask and leaves an existing directory alone; the cache
        # directory is ours, so make it private either way.
        self._directory.chmod(0o700)
        self._dir_ready = True

    def _get_blocking(self, key: str) -> CacheEntry | None:
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("web cache: cannot read %s: %s", path, exc)
            return None
        entry = self._sealer.open(key, blob)
        if entry is None or entry.expired(self._clock()):
            _remove(path)
            return None
        return entry

    def _set_blocking(self, key: str, entry: CacheEntry) -> None:
        try:
            self._ensure_dir()
            path = self.path_for(key)
            # write_atomic's temp file comes from mkstemp, hence already mode 0600.
            write_atomic(path, self._sealer.seal(key, entry))
            os.utime(path, (entry.expires_at, entry.expires_at))
            self._writes_since_prune += 1
            if self._prune_due():
                self.prune()
        except OSError as exc:
            logger.warning("web cache: cannot write to %s: %s", self._directory, exc)

    def _prune_due(self) -> bool:
        if self._last_prune is None:
            return True
        if self._clock() - self._last_prune >= self._prune_interval:
            return True
        return self._files_at_prune + self._writes_since_prune > self._max_files


def _remove(path: Path) -> None:
    """Delete a cache file if possible; one that stays is only a wasted read later."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


class TieredCache:
    """Memory in front of a slower shared cache: read memory first, write both."""

    def __init__(self, memory: MemoryCache, disk: Cache) -> None:
        self.memory = memory
        self.disk = disk

    async def get(self, key: str) -> CacheEntry | None:
        """Memory's entry, else the disk's (then kept in memory until it expires)."""
        entry = await self.memory.get(key)
        if entry is not None:
            return entry
        entry = await self.disk.get(key)
        if entry is not None:
            # The entry keeps its stored_at and ttl, so in memory it lives exactly
            # the ttl it has left and still reports its true age.
            self.memory.put(key, entry)
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Write to memory and disk."""
        await self.memory.set(key, value, ttl)
        await self.disk.set(key, value, ttl)

    async def aclose(self) -> None:
        """Close both tiers."""
        await self.memory.aclose()
        await self.disk.aclose()


class RedisCache:
    """Sealed entries in Redis under ``prefix + key``, expiring with ``SET ... EX``.

    Shared by every doiget process that uses the same Redis and the same cache
    secret (set ``DOIGET_CACHE_KEY`` on each host to share entries across hosts).
    Redis being unreachable reads as a miss and writes as a no-op; a warning is
    logged once per outage (again after Redis has answered in between).
    """

    def __init__(
        self,
        url: str,
        key: bytes,
        prefix: str = "doiget:web:",
        clock: Clock = time.time,
    ) -> None:
        from redis.asyncio import from_url
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self._sealer = Sealer(key)
        self._prefix = prefix
        self._clock = clock
        self._warned = False
        # The cache must not hold a tool call up: short timeouts and one immediate
        # retry (for a pooled connection that went stale), not redis-py's default
        # series of backed-off retries.
        self._client: Redis = from_url(
            url,
            socket_connect_timeout=1.0,
            socket_timeout=2.0,
            retry=Retry(NoBackoff(), 1),
        )

    def redis_key(self, key: str) -> str:
        """The Redis key that holds ``key``'s entry."""
        return self._prefix + self._sealer.name(key)

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None (also when Redis is unreachable)."""
        from redis.exceptions import RedisError

        try:
            blob = await self._client.get(self.redis_key(key))
        except (RedisError, OSError) as exc:
            self._warn(exc)
            return None
        self._warned = False
        # The client does not decode responses, so a value is bytes (None: no key).
        if not isinstance(blob, bytes):
            return None
        entry = self._sealer.open(key, blob)
        # EX is rounded up to whole seconds; the sealed ttl is the exact one.
        if entry is None or entry.expired(self._clock()):
            return None
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds (a no-op when Redis is unreachable)."""
        from redis.exceptions import RedisError

        if ttl <= 0:
            return
        blob = self._sealer.seal(key, CacheEntry(value, self._clock(), ttl))
        try:
            await self._client.set(self.redis_key(key), blob, ex=math.ceil(ttl))
        except (RedisError, OSError) as exc:
            self._warn(exc)
            return
        self._warned = False

    async def aclose(self) -> None:
        """Close the connection pool."""
        from redis.exceptions import RedisError

        try:
            await self._client.aclose()
        except (RedisError, OSError) as exc:
            logger.debug("web cache: closing redis failed: %s", exc)

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("web cache: redis unavailable, continuing without it: %s", exc)


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
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"The web cache key file {path} holds {len(key)} bytes, not {KEY_BYTES}. "
            "Delete it (a new key is made and the old cache is ignored) or set "
            "DOIGET_CACHE_KEY.",
        )
    return key


def _key_file(path: Path) -> bytes:
    """The key in ``path``, made there once when it does not exist.

    A new key is written to a private temp file (mkstemp: O_EXCL, mode 0600),
    fsynced, then hard-linked to ``path``. ``link`` refuses an existing name just
    as O_EXCL does, and the name appears with all 32 bytes in it, so of two
    processes racing exactly one key wins and the other reads that one back.
    """
    try:
        return _read_key_file(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)
    return _read_key_file(path)


def cache_secret(settings: Settings) -> bytes:
    """The 32-byte key that seals the web cache.

    From ``DOIGET_CACHE_KEY`` when set (any string, via HKDF-SHA256), else the key
    generated once into ``data_dir/web-cache.key``.
    """
    if settings.cache_key is not None:
        return _derive_key(settings.cache_key.reveal())
    return _key_file(settings.data_dir / KEY_FILE_NAME)


def open_cache(settings: Settings, clock: Callable[[], float] = time.time) -> Cache | None:
    """The cache these settings ask for: none, Redis, or memory in front of disk."""
    if not settings.web_cache:
        return None
    secret = cache_secret(settings)
    if settings.redis_url:
        return RedisCache(settings.redis_url, secret, clock=clock)
    return TieredCache(
        MemoryCache(clock=clock),
        EncryptedDiskCache(settings.data_dir / DISK_DIR_NAME, secret, clock=clock),
    )
