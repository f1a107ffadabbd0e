"""Only what can succeed on a second try is retried: a dropped connection is tried
again, while a URL that cannot be requested, a TLS certificate that does not
verify, a TLS handshake that cannot succeed, a malformed response and a body that
does not decode are final, each with its own plain reason. Counted as the servers
see it: connections and requests on loopback, never beyond."""

from __future__ import annotations

import logging
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.web.failure import failure_of

from netutil import make_network, raised
from replay import ReplayUpstream, Reply


class RawServer:
    """A loopback TCP server that answers every connection with ``answer(conn)`` and
    counts connections: a server that is not (quite) HTTP or TLS."""

    def __init__(self, answer: Callable[[socket.socket], None]) -> None:
        self._answer = answer
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                self._answer(conn)

    @contextmanager
    def running(self) -> Iterator[RawServer]:
        self._thread.start()
        try:
            yield self
        finally:
            self._listener.close()


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk


def _reset(conn: socket.socket) -> None:
    """Read the request, then drop the connection with a TCP reset."""
    _read_request(conn)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _not_http(conn: socket.socket) -> None:
    _read_request(conn)
    conn.sendall(b"THIS IS NOT HTTP\r\n\r\n")


def _plaintext(conn: socket.socket) -> None:
    """Answer a TLS ClientHello in clear text, as a plain HTTP server does."""
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def _mapped(env: dict[str, str], host: str, port: int, ca: Path | None = None) -> dict[str, str]:
    mapped = {**env, "DOIGET_HOST_MAP": f"{host}=127.0.0.1:{port}"}
    return mapped if ca is None else {**mapped, "DOIGET_CA_BUNDLE": str(ca)}


def _web_get(url: str) -> Callable[..., object]:
    return lambda network: network.client("web", any_public_host=True).get(url)


# -- dropped connections: retried -------------------------------------------------


async def test_a_reset_connection_is_retried(doiget_env: dict[str, str]) -> None:
    with RawServer(_reset).running() as server:
        env = _mapped(doiget_env, "blog.example.org", server.port)
        error = await raised(make_network(env), _web_get("http://blog.example.org/page"))
    assert error.code is ErrorCode.NETWORK_ERROR
    assert "tried 4 times" in error.message
    assert server.connections == 4
    assert failure_of(error).retryable


# -- permanent failures: one attempt -------------------------------------------


def _assert_final(error: DoigetError, transport: str) -> None:
    assert error.code is ErrorCode.NETWORK_ERROR, error.message
    assert (error.details or {}).get("transport") == transport
    assert "not retried" in error.message
    assert "(tried " not in error.message
    failure = failure_of(error)
    assert not failure.retryable
    assert "Do not retry" in failure.suggested_action


async def test_a_malformed_response_is_not_retried(doiget_env: dict[str, str]) -> None:
    with RawServer(_not_http).running() as server:
        env = _mapped(doiget_env, "blog.example.org", server.port)
        error = await raised(make_network(env), _web_get("http://blog.example.org/page"))
    _assert_final(error, "malformed_response")
    assert server.connections == 1


async def test_a_tls_handshake_with_a_plain_http_server_is_not_retried(
    doiget_env: dict[str, str],
) -> None:
    with RawServer(_plaintext).running() as server:
        env = _mapped(doiget_env, "blog.example.org", server.port)
        error = await raised(make_network(env), _web_get("https://blog.example.org/page"))
    _assert_final(error, "tls_handshake")
    assert server.connections == 1


@pytest.mark.parametrize(
    ("served_names", "not_after", "own_ca", "transport", "said"),
    [
        (("blog.example.org",), None, False, "tls_certificate", "does not verify"),
        (("other.example",), None, True, "tls_hostname", "another host name"),
        (
            ("blog.example.org",),
            datetime(2020, 1, 1, tzinfo=UTC),
            True,
            "tls_certificate",
            "expired",
        ),
    ],
    ids=["unknown-ca", "hostname-mismatch", "expired"],
)
async def test_a_certificate_that_does_not_verify_is_one_connection(
    tmp_path: Path,
    doiget_env: dict[str, str],
    served_names: tuple[str, ...],
    not_after: datetime | None,
    own_ca: bool,
    transport: str,
    said: str,
) -> None:
    bad = ReplayUpstream(served_names, not_after=not_after).start(tmp_path)
    try:
        bad.route("blog.example.org", "/page", Reply(200, b"<html></html>"))
        assert bad.ca_path is not None
        env = _mapped(doiget_env, "blog.example.org", bad.port, bad.ca_path if own_ca else None)
        error = await raised(make_network(env), _web_get("https://blog.example.org/page"))
        assert bad.requests == []
        assert bad.connections == 1
    finally:
        bad.stop()
    _assert_final(error, transport)
    assert said in error.message
    assert "certificate" in error.message


async def test_a_papers_source_with_a_bad_certificate_is_one_connection(
    tmp_path: Path, doiget_env: dict[str, str]
) -> None:
    bad = ReplayUpstream(("api.crossref.org",)).start(tmp_path)
    try:
        env = _mapped(doiget_env, "api.crossref.org", bad.port)
        error = await raised(
            make_network(env),
            lambda network: network.client("crossref").get_json("https://api.crossref.org/works/x"),
        )
        assert bad.connections == 1
    finally:
        bad.stop()
    _assert_final(error, "tls_certificate")


async def test_a_body_that_does_not_decode_is_not_retried(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "blog.example.org",
        "/page",
        Reply(200, b"this is not gzip", {"Content-Type": "text/html", "Content-Encoding": "gzip"}),
    )
    error = await raised(make_network(doiget_env), _web_get("https://blog.example.org/page"))
    _assert_final(error, "undecodable_body")
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    "location",
    ["http:/\\127.0.0.1/", "http:127.0.0.1", "http://", "https://[::1"],
)
async def test_a_redirect_to_a_url_that_cannot_be_requested_is_final(
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    location: str,
) -> None:
    upstream.redirect("blog.example.org", "/page", location)
    with caplog.at_level(logging.DEBUG, logger="doiget.net"):
        error = await raised(make_network(doiget_env), _web_get("https://blog.example.org/page"))
    _assert_final(error, "unusable_url")
    assert "redirect hop 1" in error.message
    assert len(upstream.requests) == 1
    assert not [record for record in caplog.records if "(hop 1, attempt" in record.getMessage()]
