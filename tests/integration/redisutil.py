"""A private redis-server on a loopback port, for the Redis cache and session tests.

Test modules import the fixture functions (which register the fixtures
``redis_server`` and ``raw``) and skip themselves with :data:`needs_redis` when
redis-server is not installed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis.asyncio

REDIS_SERVER = shutil.which("redis-server")
needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server is not installed (Debian package redis-server)"
)


@dataclass
class RedisServer:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(name="redis_server")
def redis_server_fixture(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server without persistence, stopped at teardown."""
    assert REDIS_SERVER is not None
    port = free_port()
    process = subprocess.Popen(
        [
            REDIS_SERVER,
            "--save",
            "",
            "--appendonly",
            "no",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(tmp_path),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = RedisServer(process, port)
    try:
        deadline = time.monotonic() + 10
        while not answers_ping(port):
            if process.poll() is not None:
                pytest.fail(f"redis-server exited with {process.returncode} on port {port}")
            if time.monotonic() > deadline:
                pytest.fail("redis-server did not answer PING within 10 s")
            time.sleep(0.05)
        yield server
    finally:
        server.stop()


@pytest.fixture(name="raw")
async def raw_fixture(redis_server: RedisServer) -> AsyncIterator[redis.asyncio.Redis]:
    """A plain client, to look at what the cache stored."""
    client = redis.asyncio.from_url(redis_server.url)
    yield client
    await client.aclose()
