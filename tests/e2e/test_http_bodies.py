"""Over HTTP, a body no parser can take is answered and the server goes on serving."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from httputil import TOKEN, http_server, token_file
from mcputil import INITIALIZE

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": f"Bearer {TOKEN}",
}

BODIES = [
    b"[" * 1100 + b"]" * 1100,
    b"[" * 200_000,
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":'
    + b"[" * 3000
    + b"]" * 3000
    + b"}}",
    b"\xff\xfe not utf-8",
]


def test_a_body_nested_too_deeply_is_a_json_rpc_error_not_a_crash(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN))}
    with http_server(env, tmp_path) as server:
        for body in BODIES:
            answer = httpx.post(server.url, content=body, headers=HEADERS, timeout=30)
            assert answer.status_code in (400, 413), (body[:40], answer.status_code)
            error = answer.json()["error"]
            assert error["code"] in (-32700, -32600), body[:40]
            health = httpx.get(f"{server.base}/healthz", timeout=10)
            assert health.status_code == 200, body[:40]
        served = httpx.post(server.url, json=INITIALIZE, headers=HEADERS, timeout=30)
        assert served.status_code == 200
        assert server.process.poll() is None
    assert "Traceback" not in server.stderr
    assert "RecursionError" not in server.stderr
    logged = [json.loads(line) for line in server.stderr.splitlines() if line.startswith("{")]
    assert len([line for line in logged if line.get("status") in (400, 413)]) == len(BODIES)
