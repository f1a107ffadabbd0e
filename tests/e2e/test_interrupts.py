"""Ctrl-C (SIGINT) ends any command at once, with no traceback and status 130; a
server stops gracefully first."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from httputil import TOKEN, http_server, token_file
from mcputil import INITIALIZE, spawn_server

from cliutil import clean_env, command
from replay import ReplayUpstream, Reply

INTERRUPTED = 130


def _wait_for(condition: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _interrupt(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> str:
    """SIGINT, the exit within 15 s, and what the process wrote on stderr."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("still running 15 s after Ctrl-C") from None
    assert process.stderr is not None
    stderr = process.stderr.read()
    return stderr.decode() if isinstance(stderr, bytes) else stderr


def test_ctrl_c_ends_a_stdio_server_that_is_waiting_for_input(
    doiget_env: dict[str, str],
) -> None:
    server = spawn_server(doiget_env)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    stderr = _interrupt(server)
    assert server.returncode == INTERRUPTED, stderr
    assert "Traceback" not in stderr
    assert "KeyboardInterrupt" not in stderr


def test_ctrl_c_ends_a_command_waiting_on_a_slow_upstream(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.route("api.crossref.org", "/works/10.5555/slow", Reply(200, b"{}", delay=120))
    process = subprocess.Popen(
        command("resolve", "10.5555/slow"),
        env=clean_env(doiget_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for(lambda: upstream.connections > 0, "the request to reach the upstream")
    stderr = _interrupt(process)
    assert process.returncode == INTERRUPTED, stderr
    assert "Traceback" not in stderr
    assert "Aborted" not in stderr
    assert "interrupted" in stderr
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    assert not [path for path in store.rglob("*") if path.is_file() and ".tmp" in path.name]


def test_ctrl_c_stops_an_http_server_gracefully_with_status_130(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN))}
    with http_server(env, tmp_path) as server:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(timeout=30)
    assert server.exit_code == INTERRUPTED, server.stderr
    assert "Traceback" not in server.stderr
