"""The dense sentence encoder the claim engine weighs meaning with.

The packaged MiniLM model (the library's query encoder, loaded on first use, once per
process) finds a sentence that says what the claim says in other words. Encoding is
CPU work: callers run it in the work pool, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


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
