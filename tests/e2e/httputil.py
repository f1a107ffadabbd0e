"""A real ``doiget serve --http`` on a loopback port, and the SDK's Streamable HTTP
client for it."""

from __future__ import annotations

import resource
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from mcp.client.session import ClientSession, MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from redisutil import free_port

from cliutil import clean_env, command

TOKEN = "team-token-5f1c9a0e7d3b42c8a6"


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    port: int
    stderr_path: Path
    exit_code: int | None = None
    stderr: str = field(default="")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def stop(self, grace: float = 30.0) -> int:
        """SIGTERM, then wait for the exit; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.exit_code = self.process.returncode
        self.stderr = self.stderr_path.read_text()
        return self.exit_code


def token_file(tmp_path: Path, *tokens: str) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_text("# team tokens\n" + "\n".join(tokens) + "\n\n")
    path.chmod(0o600)
    return path


@contextmanager
def http_server(
    env: dict[str, str],
    tmp_path: Path,
    *args: str,
    port: int | None = None,
    open_files: int | None = None,
) -> Iterator[HttpServer]:
    """``doiget serve --http`` on a free loopback port; stopped with SIGTERM at the end.

    ``open_files``: the server's open-file limit (soft and hard), as on a small host.
    """
    port = port or free_port()

    def limited() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    stderr_path = tmp_path / f"serve-{port}.stderr"
    with stderr_path.open("w") as err:
        process = subprocess.Popen(
            command("serve", "--http", "--port", str(port), *args),
            env=clean_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            preexec_fn=limited if open_files is not None else None,
        )
    server = HttpServer(process, port, stderr_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"serve --http exited: {stderr_path.read_text()}")
            try:
                if httpx.get(f"{server.base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("serve --http did not answer /healthz within 60 s")
            time.sleep(0.1)
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def http_session(
    url: str, token: str | None = TOKEN, message_handler: MessageHandlerFnT | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session over Streamable HTTP with ``token``; the server's
    notifications go to ``message_handler``."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


def worker_pids(pid: int) -> list[int]:
    """The worker processes process ``pid`` spawned (multiprocessing's resource tracker
    left out); none once it is gone."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [
        int(child)
        for child in children
        if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]
