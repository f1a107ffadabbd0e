"""The replay upstream keeps each test's recordings to that test."""

from __future__ import annotations

import socket
import ssl
import threading
import time

from replay import ReplayUpstream, Reply


def _get(upstream: ReplayUpstream, path: str, outcome: list[str]) -> None:
    """GET ``path`` of api.crossref.org from the replay server; note the status line,
    or "cut" when the connection ends without an answer."""
    assert upstream.ca_path is not None
    context = ssl.create_default_context(cafile=str(upstream.ca_path))
    request = f"GET {path} HTTP/1.1\r\nHost: api.crossref.org\r\nConnection: close\r\n\r\n"
    raw = socket.create_connection(("127.0.0.1", upstream.port), timeout=60)
    with context.wrap_socket(raw, server_hostname="api.crossref.org") as tls:
        tls.sendall(request.encode())
        try:
            head = tls.recv(64)
        except OSError:
            head = b""
    outcome.append(head.split(b"\r\n")[0].decode() if head else "cut")


def test_a_slow_request_of_an_ended_test_is_woken_and_not_recorded_later(
    upstream: ReplayUpstream,
) -> None:
    upstream.route("api.crossref.org", "/works/10.5555/slow", Reply(200, b"{}", delay=120))
    outcome: list[str] = []
    client = threading.Thread(target=_get, args=(upstream, "/works/10.5555/slow", outcome))
    client.start()
    deadline = time.monotonic() + 30
    while upstream.connections == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert upstream.connections == 1
    upstream.reset()  # what the fixture does between two tests
    upstream.route("api.crossref.org", "/works/10.5555/quick", Reply(200, b"{}"))
    client.join(timeout=30)
    assert not client.is_alive(), "a reset ends a delayed reply at once"
    assert outcome == ["cut"]  # never answered
    quick: list[str] = []
    _get(upstream, "/works/10.5555/quick", quick)
    assert quick == ["HTTP/1.1 200 OK"]
    assert [request.path for request in upstream.requests] == ["/works/10.5555/quick"]
