"""Graceful end of a stdio session: when stdin closes, answer what is in flight first.

The SDK stops serving as soon as its read stream ends, abandoning requests still
running. :func:`draining` puts a relay between the transport and the server that
holds the end of input back until every request read so far has been answered, or
:data:`GRACE_SECONDS` have passed, whichever comes first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.shared.message import SessionMessage

GRACE_SECONDS: Final = 5.0


class _Pending:
    """Ids of requests read but not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self._changed = anyio.Event()

    def opened(self, message: Any) -> None:
        if isinstance(message, SessionMessage) and isinstance(
            message.message, types.JSONRPCRequest
        ):
            self.ids.add(message.message.id)

    def closed(self, message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, (types.JSONRPCResponse, types.JSONRPCError)):
            self.ids.discard(inner.id)
            self._changed.set()
            self._changed = anyio.Event()

    async def drained(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            while self.ids:
                await self._changed.wait()


@asynccontextmanager
async def draining(
    read_stream: ObjectReceiveStream[Any],
    write_stream: ObjectSendStream[SessionMessage],
    rejected: MemoryObjectReceiveStream[SessionMessage],
) -> AsyncIterator[tuple[ObjectReceiveStream[Any], ObjectSendStream[SessionMessage]]]:
    """Relayed (read, write) streams whose end of input waits for pending answers.

    ``rejected`` carries answers to lines refused before the SDK saw them; they are
    written out with the SDK's answers, and any still queued at the end are flushed.
    """
    pending = _Pending()
    inbound_send, inbound_receive = anyio.create_memory_object_stream[Any](16)
    outbound_send, outbound_receive = anyio.create_memory_object_stream[SessionMessage](16)

    relay_in_scope = anyio.CancelScope()

    async def relay_in() -> None:
        with relay_in_scope:
            async with inbound_send:
                async for message in read_stream:
                    pending.opened(message)
                    await inbound_send.send(message)
                await pending.drained(GRACE_SECONDS)

    async def relay_out() -> None:
        async with outbound_receive, write_stream:
            async for message in outbound_receive:
                await write_stream.send(message)
                pending.closed(message)

    relay_rejected_scope = anyio.CancelScope()

    async def relay_rejected() -> None:
        with relay_rejected_scope:
            async for message in rejected:
                with anyio.CancelScope(shield=True):
                    await outbound_send.send(message)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(relay_in)
        tasks.start_soon(relay_out)
        tasks.start_soon(relay_rejected)
        try:
            yield inbound_receive, outbound_send
        finally:
            relay_rejected_scope.cancel()
            with suppress(anyio.WouldBlock, anyio.EndOfStream):
                while True:
                    await outbound_send.send(rejected.receive_nowait())
            await outbound_send.aclose()  # relay_out drains what is queued, then closes stdout
            relay_in_scope.cancel()
