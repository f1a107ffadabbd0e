"""A slow reading answered at once from its latest result, read again behind the answer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final, Generic, TypeVar

logger = logging.getLogger("doiget.server")

T = TypeVar("T")
# After a reading, the next waits this many times as long as the reading took: a scan
# of every stored file then takes at most a tenth of a thread's time, however often
# it is asked for (an asker polling health many times a second included).
REST_FACTOR: Final = 10.0


class Refreshed(Generic[T]):
    """The latest result of ``read`` (a slow call, such as a scan of every stored file).

    The first ask waits for a reading. Each later ask is answered at once with the
    latest finished reading and starts a new one unless one is under way or the last
    one ended less than ``rest`` times its own length ago, so a change shows from the
    first ask after the reading that saw it ends, no more than one reading runs at a
    time, and readings take a bounded share of the time however many asks come.
    """

    def __init__(self, read: Callable[[], Awaitable[T]], *, rest: float = REST_FACTOR) -> None:
        self._read = read
        self._rest = rest
        self._latest: list[T] = []
        self._reading: asyncio.Task[None] | None = None
        self._next = 0.0  # monotonic time before which no new reading starts

    async def get(self) -> T:
        """The latest reading (the first one waited for, its failure raised)."""
        idle = self._reading is None or self._reading.done()
        if idle and time.monotonic() >= self._next:
            self._reading = asyncio.get_running_loop().create_task(self._refresh())
        if not self._latest:
            if self._reading is not None:
                await asyncio.shield(self._reading)
            if not self._latest:
                return await self._read()
        return self._latest[0]

    async def _refresh(self) -> None:
        began = time.monotonic()
        try:
            self._latest[:] = [await self._read()]
        except Exception:  # the latest reading stands; the next ask tries again
            logger.warning("a background reading failed", exc_info=True)
        ended = time.monotonic()
        self._next = ended + self._rest * (ended - began)

    async def aclose(self) -> None:
        """Stop a reading under way."""
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
        self._reading = None
