"""Malformed JSON-RPC over stdio is answered per JSON-RPC 2.0, never dropped.

One server takes every malformed line in turn; after each, a valid request must
still be answered, and stdout must carry nothing but JSON-RPC frames.
"""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from mcputil import INITIALIZE, spawn_server

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

LIST = {"jsonrpc": "2.0", "method": "tools/list"}

# (raw line, expected error code, expected id)
MALFORMED: list[tuple[bytes, int, Any]] = [
    (b"not json", PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":3,', PARSE_ERROR, None),
    (b"\xff\xfe{}", PARSE_ERROR, None),
    (json.dumps({**LIST, "jsonrpc": "1.0", "id": 900}).encode(), INVALID_REQUEST, 900),
    (json.dumps({"jsonrpc": "2.0", "id": 901}).encode(), INVALID_REQUEST, 901),
    (
        json.dumps(
            {"jsonrpc": "2.0", "id": 902, "method": "tools/call", "params": ["x", {}]}
        ).encode(),
        INVALID_PARAMS,
        902,
    ),
    (json.dumps({**LIST, "id": {"n": 1}}).encode(), INVALID_REQUEST, None),
    (json.dumps({**LIST, "id": 1.5}).encode(), INVALID_REQUEST, None),
    (json.dumps({**LIST, "id": True}).encode(), INVALID_REQUEST, None),
    (json.dumps({**LIST, "id": [7]}).encode(), INVALID_REQUEST, None),
    (json.dumps({"jsonrpc": "2.0", "id": 903, "method": 5}).encode(), INVALID_REQUEST, 903),
    (
        json.dumps({"jsonrpc": "2.0", "id": "s-904", "method": ""}).encode(),
        INVALID_REQUEST,
        "s-904",
    ),
    (
        json.dumps({"jsonrpc": "2.0", "id": 905, "method": "ping", "params": 3}).encode(),
        INVALID_REQUEST,
        905,
    ),
    (json.dumps({"jsonrpc": "2.0", "method": 7}).encode(), INVALID_REQUEST, None),
    (json.dumps([{**LIST, "id": 906}]).encode(), INVALID_REQUEST, None),
    (b"[]", INVALID_REQUEST, None),
    (b"42", INVALID_REQUEST, None),
    (b'"tools/list"', INVALID_REQUEST, None),
    (b"null", INVALID_REQUEST, None),
    (json.dumps({"id": 907, "method": "tools/list"}).encode(), INVALID_REQUEST, 907),
    (
        json.dumps({"jsonrpc": "2.0", "id": -908, "method": "no/such/method"}).encode(),
        METHOD_NOT_FOUND,
        -908,
    ),
]


def _nested(depth: int, opening: str = "[", closing: str = "]") -> bytes:
    return (opening * depth + closing * depth).encode()


# Documents nested beyond what a parser takes, at the top and inside a valid request.
TOO_DEEP: list[tuple[bytes, int, Any]] = [
    (_nested(1100), PARSE_ERROR, None),
    (_nested(100_000), PARSE_ERROR, None),
    (_nested(5000, '{"a":', "}"), PARSE_ERROR, None),
    (_nested(3000)[:-10], PARSE_ERROR, None),
    (
        b'{"jsonrpc":"2.0","id":910,"method":"tools/call","params":{"name":"x","arguments":'
        + _nested(2000, '{"a":', "}")[:-1]
        + b"1"
        + b"}" * 2000
        + b"}}",
        PARSE_ERROR,
        None,
    ),
    (
        b'{"jsonrpc":"2.0","id":911,"method":"ping","params":{"meta":' + _nested(400) + b"}}",
        INVALID_REQUEST,
        911,
    ),
]


class Wire:
    """A spawned server's stdin, and its stdout read line by line on a thread."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = spawn_server(env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        line = self.lines.get(timeout=30)
        message: dict[str, Any] = json.loads(line)  # only frames on stdout
        assert message["jsonrpc"] == "2.0"
        return message

    def close(self) -> bytes:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        assert self.process.stderr is not None
        return self.process.stderr.read()


def test_every_malformed_line_is_answered_and_serving_goes_on(
    doiget_env: dict[str, str],
) -> None:
    wire = Wire(doiget_env)
    try:
        wire.send(json.dumps(INITIALIZE).encode())
        assert wire.answer()["id"] == 1
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        for number, (raw, code, expected_id) in enumerate(MALFORMED, start=100):
            wire.send(raw)
            error = wire.answer()
            assert error["id"] == expected_id, raw
            assert error["error"]["code"] == code, (raw, error)
            assert error["error"]["message"], raw
            wire.send(json.dumps({**LIST, "id": number}).encode())
            listed = wire.answer()
            assert listed["id"] == number, raw
            assert listed["result"]["tools"], raw
    finally:
        stderr = wire.close()
    assert wire.process.returncode == 0, stderr
    assert b"Traceback" not in stderr


def test_input_nested_too_deeply_is_answered_and_serving_goes_on(
    doiget_env: dict[str, str],
) -> None:
    wire = Wire(doiget_env)
    try:
        wire.send(json.dumps(INITIALIZE).encode())
        assert wire.answer()["id"] == 1
        for number, (raw, code, expected_id) in enumerate(TOO_DEEP, start=200):
            wire.send(raw)
            error = wire.answer()
            assert (error["id"], error["error"]["code"]) == (expected_id, code), raw[:80]
            wire.send(json.dumps({"jsonrpc": "2.0", "id": number, "method": "ping"}).encode())
            assert wire.answer() == {"jsonrpc": "2.0", "id": number, "result": {}}
    finally:
        stderr = wire.close()
    assert wire.process.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert b"RecursionError" not in stderr


def test_a_bom_before_a_request_is_ignored_and_blank_lines_are_skipped(
    doiget_env: dict[str, str],
) -> None:
    wire = Wire(doiget_env)
    try:
        wire.send("\ufeff".encode() + json.dumps(INITIALIZE).encode())
        assert wire.answer()["result"]["serverInfo"]["name"]
        wire.send(b"")
        wire.send(b"   ")
        wire.send(json.dumps({**LIST, "id": "after-blank"}).encode())
        assert wire.answer()["id"] == "after-blank"
    finally:
        wire.close()
    assert wire.process.returncode == 0


def test_a_malformed_line_just_before_end_of_input_is_still_answered(
    doiget_env: dict[str, str],
) -> None:
    wire = Wire(doiget_env)
    wire.send(json.dumps(INITIALIZE).encode())
    assert wire.answer()["id"] == 1
    wire.send(b"{oops")
    stderr = wire.close()
    error = wire.answer()
    assert (error["id"], error["error"]["code"]) == (None, PARSE_ERROR), stderr
