"""The stdio wire, checked line by line against JSON-RPC 2.0 before the SDK sees it.

The SDK drops a line it cannot validate without answering, and reads a request
whose ``id`` is not a string or an integer as a notification, so a client waiting
on that id would hang. Each line is checked here first: a valid message goes on to
the SDK unchanged; anything else is answered at once with -32700 (not JSON) or
-32600 (not a valid request), echoing the id when the id itself is valid. A
leading byte-order mark is dropped; a line that is only whitespace is skipped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, Final, cast

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from doiget.jsontext import NestingError, parse_json

# A frame larger than this is refused rather than held in memory.
MAX_FRAME_BYTES: Final = 16 * 1024 * 1024
_BOM: Final = "\ufeff"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with one line: forward ``line`` to the SDK, or send ``answer``."""

    line: str | None = None
    answer: types.JSONRPCError | None = None


def _error(code: int, message: str, message_id: int | str | None = None) -> Verdict:
    error = types.ErrorData(code=code, message=message)
    return Verdict(answer=types.JSONRPCError(jsonrpc="2.0", id=message_id, error=error))


def _valid_id(value: Any) -> bool:
    # MCP ids are strings or integers; JSON's true/false are not integers here.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_line(raw: bytes) -> Verdict:
    """The verdict on one line read from the wire (without its newline)."""
    try:
        text = raw.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError:
        return _error(types.PARSE_ERROR, "Parse error: the message is not valid UTF-8.")
    if not text.strip():
        return Verdict()
    try:
        document = parse_json(text)
    except NestingError:
        return _error(types.PARSE_ERROR, "Parse error: the message is nested too deeply.")
    except ValueError:
        return _error(types.PARSE_ERROR, "Parse error: the message is not valid JSON.")
    if isinstance(document, list):
        return _error(
            types.INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one JSON-RPC object per line.",
        )
    if not isinstance(document, dict):
        return _error(types.INVALID_REQUEST, "Invalid Request: a message must be a JSON object.")
    return _check_object(document, text)


def _check_object(document: dict[str, Any], text: str) -> Verdict:
    has_id = "id" in document
    message_id = document.get("id")
    if has_id and not _valid_id(message_id):
        return _error(types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer.")
    echoed = message_id if has_id else None
    if document.get("jsonrpc") != "2.0":
        return _error(types.INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0".', echoed)
    if "method" in document:
        method = document["method"]
        if not isinstance(method, str) or not method:
            return _error(
                types.INVALID_REQUEST, "Invalid Request: method must be a non-empty string.", echoed
            )
        params = document.get("params")
        if params is not None and not isinstance(params, dict):
            code = types.INVALID_PARAMS if isinstance(params, list) and has_id else None
            return _error(
                code or types.INVALID_REQUEST,
                f"Invalid params: params of {method} must be a JSON object.",
                echoed,
            )
    elif not has_id or not ({"result", "error"} & document.keys()):
        return _error(
            types.INVALID_REQUEST,
            "Invalid Request: a message needs a method (request or notification) or a "
            "result or error (response).",
            echoed,
        )
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:
        return _error(types.INVALID_REQUEST, "Invalid Request: the message is malformed.", echoed)
    return Verdict(line=text)


class CheckedLines:
    """The lines of ``stream`` the SDK may see; every other line is answered through
    ``reject`` (see :func:`check_line`)."""

    def __init__(
        self, stream: BinaryIO, reject: Callable[[SessionMessage], Awaitable[None]]
    ) -> None:
        self._stream = stream
        self._reject = reject

    async def _readline(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self._stream.readline, limit, abandon_on_cancel=True)

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            raw = await self._readline(MAX_FRAME_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_FRAME_BYTES and not raw.endswith(b"\n"):
                await self._skip_rest_of_line()
                verdict = _error(
                    types.INVALID_REQUEST,
                    f"Invalid Request: the message is larger than {MAX_FRAME_BYTES} bytes.",
                )
            else:
                verdict = check_line(raw.rstrip(b"\r\n"))
            if verdict.answer is not None:
                await self._reject(SessionMessage(verdict.answer))
            elif verdict.line is not None:
                yield verdict.line

    async def _skip_rest_of_line(self) -> None:
        while True:
            rest = await self._readline(MAX_FRAME_BYTES)
            if not rest or rest.endswith(b"\n"):
                return


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire's input as a private binary stream, with fd 0 pointed at the null
    device meanwhile so that nothing else in the process (or its children) reads it.

    The private descriptor is never closed: a worker thread may still be blocked
    reading it when serving ends, and a recycled descriptor must not be read there.
    """
    stdin_fd = sys.stdin.fileno()
    private = os.dup(stdin_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, stdin_fd)
    finally:
        os.close(null)
    try:
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, stdin_fd)


@asynccontextmanager
async def checked_stdio() -> AsyncIterator[
    tuple[
        ObjectReceiveStream[SessionMessage | Exception],
        ObjectSendStream[SessionMessage],
        MemoryObjectReceiveStream[SessionMessage],
    ]
]:
    """The SDK's stdio streams over the checked wire, plus the stream of answers to
    the lines it refused (the caller writes those out beside the SDK's own)."""
    rejected_send, rejected = anyio.create_memory_object_stream[SessionMessage](16)
    with claimed_stdin() as wire:
        lines = CheckedLines(wire, rejected_send.send)
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write):
            yield read, write, rejected
