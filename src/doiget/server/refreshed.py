"""A slow reading answered at once from its latest result, read again behind the answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

logger = logging.getLogger("doiget.server")

T = TypeVar("T")


class Refreshed(Generic[T]):
    """The latest result of ``read`` (a slow call, such as a scan of every stored file).

    The first ask waits for a reading. Each later ask is answered at once with the
    latest finished reading and starts a new one unless one is under way, so a change
    shows from the first ask after the reading that saw it ends, and however many
    asks come, no more than one reading runs at a time.
    """

    def __init__(self, read: Callable[[], Awaitable[T]]) -> None:
        self._read = read
        self._latest: list[T] = []
        self._reading: asyncio.Task[None] | None = None

    async def get(self) -> T:
        """The latest reading (the first one waited for, its failure raised)."""
        if self._reading is None or self._reading.done():
            self._reading = asyncio.get_running_loop().create_task(self._refresh())
        if not self._latest:
            await asyncio.shield(self._reading)
            if not self._latest:
                return await self._read()
        return self._latest[0]

    async def _refresh(self) -> None:
        try:
            self._latest[:] = [await self._read()]
        except Exception:  # the latest reading stands; the next ask tries again
            logger.warning("a background reading failed", exc_info=True)

    async def aclose(self) -> None:
        """Stop a reading under way."""
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
        self._reading = None
