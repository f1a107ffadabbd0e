"""The dense sentence encoder the claim engine weighs meaning with.

The packaged MiniLM model (the library's query encoder, loaded on first use, once per
process) finds a sentence that says what the claim says in other words. Encoding is
CPU work: callers run it in the work pool, never on the event loop.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

CACHED_SOURCES: Final = 8


class SentenceEncoder(Protocol):
    """Turns texts into unit-length vectors, one row per text."""

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One normalised row per text."""


class _PackagedEncoder:
    """The packaged MiniLM weights behind :class:`SentenceEncoder`."""

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        from doiget.library.embedding import embedder_for
        from doiget.library.projects import DEFAULT_EMBED_MODEL

        return embedder_for(DEFAULT_EMBED_MODEL).embed(texts)


_PACKAGED = _PackagedEncoder()


def default_encoder() -> SentenceEncoder:
    """The packaged MiniLM encoder (its weights load on first use; INDEX_UNAVAILABLE
    when they cannot)."""
    return _PACKAGED


class _SourceVectors:
    """The sentence vectors of the last few sources, by encoder and text: checking
    several claims against one paper encodes its sentences once, and claims checked
    against it at the same time wait for that one encoding rather than each doing it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._vectors: OrderedDict[tuple[int, str], tuple[SentenceEncoder, Any]] = OrderedDict()
        self._encoding: dict[tuple[int, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def _cached(self, key: tuple[int, str], encoder: SentenceEncoder) -> Any:
        with self._lock:
            cached = self._vectors.get(key)
            if cached is not None and cached[0] is encoder:
                self._vectors.move_to_end(key)
                return cached[1]
            return None

    def get(self, encoder: SentenceEncoder, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        digest = hashlib.sha256("\n".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
        key = (id(encoder), digest)
        vectors: NDArray[np.float32] | None = self._cached(key, encoder)
        if vectors is not None:
            return vectors
        with self._lock:
            encoding = self._encoding.setdefault(key, threading.Lock())
        with encoding:  # one encoding of a source at a time; the others find its vectors
            try:
                vectors = self._cached(key, encoder)
                if vectors is not None:
                    return vectors
                vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
                with self._lock:
                    # The encoder is kept with its vectors, so its id names no other one.
                    self._vectors[key] = (encoder, vectors)
                    while len(self._vectors) > self._size:
                        self._vectors.popitem(last=False)
                return vectors
            finally:
                with self._lock:
                    self._encoding.pop(key, None)


_SOURCES = _SourceVectors(CACHED_SOURCES)


def encoded(
    claim: str, texts: Sequence[str], encoder: SentenceEncoder
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """The claim's vector and the source sentences' (these cached per source)."""
    import numpy as np

    query = np.asarray(encoder.encode([claim]), dtype=np.float32)[0]
    return query, _SOURCES.get(encoder, texts)
