"""The claim engine's source vectors: a source checked by several claims at once is
encoded once, the others waiting for its vectors."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from doiget.claims.encoder import _SourceVectors


class CountingEncoder:
    """Encodes slowly enough for every caller to arrive while the first encodes."""

    def __init__(self, callers: int) -> None:
        self.calls: list[int] = []
        self._arrived = threading.Barrier(callers, timeout=10)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(len(texts))
        if len(texts) > 1:
            threading.Event().wait(0.3)  # the others reach the cache meanwhile
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    def meet(self) -> None:
        self._arrived.wait()


def test_claims_checked_against_one_source_at_once_encode_it_once() -> None:
    sources = _SourceVectors(4)
    encoder = CountingEncoder(callers=6)
    texts = [f"sentence {n}." for n in range(50)]
    got: list[NDArray[np.float32]] = []

    def claim() -> None:
        encoder.meet()
        got.append(sources.get(encoder, texts))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert encoder.calls == [50] and len(got) == 6
    assert all(vectors is got[0] for vectors in got)


def test_an_encoding_that_fails_leaves_the_next_caller_to_encode_again() -> None:
    sources = _SourceVectors(4)
    texts = ["one.", "two."]

    class Failing:
        def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
            raise RuntimeError("weights missing")

    failing = Failing()
    for _ in range(2):
        try:
            sources.get(failing, texts)
        except RuntimeError:
            pass
        else:
            raise AssertionError("the failure was kept as vectors")
    working = CountingEncoder(callers=1)
    assert sources.get(working, texts).shape == (2, 4) and working.calls == [2]
