"""A local HTTPS server that impersonates upstream hosts from recorded responses.

It holds one certificate (from a throw-away ``trustme`` CA) valid for every host it
impersonates, answers by (host, path, query) from routes the test registers, and
records every request with arrival and completion times. ``env`` gives the
``DOIGET_HOST_MAP`` / ``DOIGET_CA_BUNDLE`` pair that points the real program at it.

Routes can inject latency, any status, Retry-After, redirects, bodies that are cut
short or larger than declared, and chunked bodies with no declared length.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import trustme

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# The int8 encoder exported from the packaged model, shared by every doiget a test
# starts: exporting it takes tens of seconds, and its own tests export it afresh
# (tests/unit/test_document_encoder.py).
SHARED_ENCODER_CACHE = Path(tempfile.gettempdir()) / f"doiget-tests-encoder-{os.getuid()}"

# Every upstream doiget talks to, plus a few neutral names for guard tests.
DEFAULT_HOSTS = (
    "api.crossref.org",
    "api.unpaywall.org",
    "export.arxiv.org",
    "arxiv.org",
    "dblp.org",
    "api.openalex.org",
    "api.semanticscholar.org",
    "eutils.ncbi.nlm.nih.gov",
    "doaj.org",
    "doi.org",
    "dx.doi.org",
    "journals.plos.org",
    "www.biorxiv.org",
    "europepmc.org",
    "link.springer.com",
    "link.aps.org",
    "www.sciencedirect.com",
    "linkinghub.elsevier.com",
    # TDM publisher APIs.
    "api.elsevier.com",
    "harvest.aps.org",
    "api.springernature.com",
    "www.ncbi.nlm.nih.gov",
    "evil.example",
    "cdn.example",
    # Web search providers and pages the web tools read.
    "html.duckduckgo.com",
    "api.search.brave.com",
    "api.tavily.com",
    "www.googleapis.com",
    "hacker-news.firebaseio.com",
    "news.ycombinator.com",
    "www.youtube.com",
    "blog.example.org",
    "docs.example.org",
    "www.nature.com",
    "www.reddit.com",
    "old.reddit.com",
    "docs.python.org",
    "realpython.com",
    # Patent search providers.
    "api.lens.org",
    "ops.epo.org",
    # Zotero's Web API and the hosts it sends file downloads and uploads to.
    "api.zotero.org",
    "files.zotero.net",
    # An OpenID provider (the HTTP server's OAuth issuer).
    "sso.lab.example",
    "zoterofilestorage.s3.amazonaws.com",
)


@dataclass
class Reply:
    """One canned answer.

    ``declared_length`` sends that Content-Length whatever the body is (a larger one
    makes a truncated body); ``chunked`` sends no length at all; ``repeat`` sends
    the body that many times (a cheap way to make a large body).
    """

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    declared_length: int | None = None
    chunked: bool = False
    repeat: int = 1
    trickle: float = 0.0  # seconds to pause after each 4 KiB of body: a slow download


@dataclass(frozen=True)
class Recorded:
    """One request as the upstream saw it."""

    host: str
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    started: float
    finished: float
    status: int
    body: bytes = b""
    # The query string as sent (``query`` keeps one value per name).
    raw_query: str = ""


@dataclass
class _Route:
    replies: list[Reply]
    served: int = 0
    answer: Callable[[dict[str, str]], Reply] | None = None

    def next_reply(self, query: dict[str, str]) -> Reply:
        self.served += 1
        if self.answer is not None:
            return self.answer(query)
        return self.replies[min(self.served - 1, len(self.replies) - 1)]


class ReplayUpstream:
    """The server. Use as a context manager, or through the ``upstream`` fixture."""

    def __init__(
        self,
        hosts: Iterable[str] = DEFAULT_HOSTS,
        tmp_dir: Path | None = None,
        *,
        not_after: datetime | None = None,
    ) -> None:
        """``not_after`` ends the certificate's validity (a past date: an expired one)."""
        self.hosts = tuple(dict.fromkeys(hosts))
        self._ca = trustme.CA()
        self._cert = self._ca.issue_cert(*self.hosts, not_after=not_after)
        self._tmp_dir = tmp_dir
        self._routes: dict[tuple[str, str, tuple[tuple[str, str], ...] | None], _Route] = {}
        # Hosts answered whole by a stateful fake that sees every request.
        self._mounts: dict[str, Callable[[Recorded], Reply]] = {}
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self.connections = 0
        self._active = 0
        self.max_in_flight = 0
        # Each reset starts a new generation: a handler still running from an earlier
        # test (a long delay) is woken and its request is not recorded in this one.
        self._generation = 0
        self._woken = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.ca_path: Path | None = None

    # -- lifecycle --------------------------------------------------------------

    def start(self, ca_dir: Path) -> ReplayUpstream:
        """Start serving on a free loopback port; write the CA bundle into ``ca_dir``."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._cert.configure_cert(context)
        self.ca_path = ca_dir / "replay-ca.pem"
        self._ca.cert_pem.write_to_path(str(self.ca_path))
        server = _TLSServer(("127.0.0.1", 0), _Handler, context, self)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the upstream first"
        return int(self._server.server_address[1])

    @property
    def env(self) -> dict[str, str]:
        """The test-seam variables that send every impersonated host here."""
        assert self.ca_path is not None
        host_map = ",".join(f"{host}=127.0.0.1:{self.port}" for host in self.hosts)
        return {"DOIGET_HOST_MAP": host_map, "DOIGET_CA_BUNDLE": str(self.ca_path)}

    def isolated_env(self, directory: Path) -> dict[str, str]:
        """``env`` plus private config, data, store and log paths under ``directory``:
        the environment of a doiget that shares nothing with the user's (and nothing
        with other tests' but the exported encoder)."""
        return {
            **self.env,
            "DOIGET_CONFIG": str(directory / "config.toml"),
            "DOIGET_DATA_DIR": str(directory / "data"),
            "DOIGET_STORE_ROOT": str(directory / "papers"),
            "DOIGET_LOG_PATH": str(directory / "state" / "provenance.jsonl"),
            "DOIGET_MODEL_CACHE": str(SHARED_ENCODER_CACHE),
        }

    def reset(self) -> None:
        """Forget routes and recordings (the server keeps running)."""
        self._settle()
        with self._lock:
            self._routes.clear()
            self._mounts.clear()
            self._requests.clear()
            self.connections = 0
            self.max_in_flight = 0
            self._active = 0
            self._generation += 1
            self._woken.set()
            self._woken = threading.Event()

    # -- routes -----------------------------------------------------------------

    def route(
        self,
        host: str,
        path: str,
        *replies: Reply,
        query: Mapping[str, str] | None = None,
    ) -> None:
        """Answer ``host`` + ``path`` (+ exact ``query`` when given) with ``replies``.

        Replies are served in order; the last one repeats.
        """
        key = (host.lower(), path, tuple(sorted(query.items())) if query is not None else None)
        with self._lock:
            self._routes[key] = _Route(list(replies) or [Reply()])

    def responder(self, host: str, path: str, answer: Callable[[dict[str, str]], Reply]) -> None:
        """Answer ``host`` + ``path`` with whatever ``answer(query)`` returns."""
        with self._lock:
            self._routes[(host.lower(), path, None)] = _Route([], answer=answer)

    def mount(self, host: str, answer: Callable[[Recorded], Reply]) -> None:
        """Answer every request to ``host`` that no route matches with ``answer(request)``,
        which sees its method, headers and body (a stateful fake upstream)."""
        with self._lock:
            self._mounts[host.lower()] = answer

    def json(self, host: str, path: str, data: Any, *, status: int = 200, **kw: Any) -> None:
        """Answer with ``data`` serialised as JSON."""
        query = kw.pop("query", None)
        body = json.dumps(data).encode()
        headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
        self.route(host, path, Reply(status, body, headers, **kw), query=query)

    def fixture(
        self,
        host: str,
        path: str,
        name: str,
        *,
        content_type: str | None = None,
        query: Mapping[str, str] | None = None,
        status: int = 200,
        **kw: Any,
    ) -> bytes:
        """Answer with the bytes of ``tests/fixtures/<name>``; return those bytes."""
        body = (FIXTURES / name).read_bytes()
        ctype = content_type or _guess_type(name)
        headers = {"Content-Type": ctype, **kw.pop("headers", {})}
        self.route(host, path, Reply(status, body, headers, **kw), query=query)
        return body

    def redirect(self, host: str, path: str, location: str, status: int = 302) -> None:
        """Answer with a redirect to ``location``."""
        self.route(host, path, Reply(status, b"", {"Location": location}))

    # -- what was seen ----------------------------------------------------------

    def _settle(self) -> None:
        # A client holds its whole answer a moment before the handler records it; wait
        # (up to 2 s) for handlers still finishing so no record lands late.
        deadline = time.monotonic() + 2.0
        while self._active and time.monotonic() < deadline:
            time.sleep(0.005)

    @property
    def requests(self) -> list[Recorded]:
        """Every recorded request, in the order they finished (handlers settled first)."""
        self._settle()
        return self._requests

    def requests_to(self, host: str) -> list[Recorded]:
        """The recorded requests for one host, in arrival order."""
        return [request for request in self.requests if request.host == host]

    # -- used by the handler ----------------------------------------------------

    def _match(self, host: str, path: str, query: dict[str, str]) -> Reply | None:
        with self._lock:
            route = self._routes.get((host, path, tuple(sorted(query.items()))))
            route = route or self._routes.get((host, path, None))
            return route.next_reply(query) if route else None

    def _enter(self) -> tuple[int, threading.Event]:
        """Count a handler in; return its generation and the event that ends its delay."""
        with self._lock:
            self._active += 1
            self.max_in_flight = max(self.max_in_flight, self._active)
            return self._generation, self._woken

    def _leave(self, record: Recorded, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # started before a reset: belongs to a test that has ended
            self._active -= 1
            self._requests.append(record)

    def _connected(self) -> None:
        with self._lock:
            self.connections += 1

    def __enter__(self) -> ReplayUpstream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _guess_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return {
        ".json": "application/json",
        ".pdf": "application/pdf",
        ".atom": "application/atom+xml",
        ".xml": "text/xml",
        ".html": "text/html; charset=utf-8",
        ".bib": "application/x-bibtex",
    }.get(suffix, "application/octet-stream")


class _TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext,
        upstream: ReplayUpstream,
    ) -> None:
        super().__init__(address, handler)
        self.context = context
        self.upstream = upstream

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake runs in the connection's own thread, not the accept loop.
        self.upstream._connected()
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(tls, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-body are part of the tests; keep stderr quiet.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _TLSServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve(self._body())

    def do_PATCH(self) -> None:
        self._serve(self._body())

    def do_PUT(self) -> None:
        self._serve(self._body())

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self, body: bytes = b"") -> None:
        upstream = self.server.upstream
        started = time.monotonic()
        generation, woken = upstream._enter()
        status = 0
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            reply = upstream._match(host, parts.path, query)
            mounted = upstream._mounts.get(host)
            if reply is None and mounted is not None:
                seen = Recorded(
                    host,
                    self.command,
                    parts.path,
                    query,
                    headers,
                    started,
                    started,
                    0,
                    body,
                    parts.query,
                )
                reply = mounted(seen)
            if reply is None:
                reply = Reply(404, f"no route for {host}{self.path}".encode(), {})
            status = reply.status
            if reply.delay and woken.wait(reply.delay):
                raise ConnectionResetError("the upstream was reset")
            self._write(reply)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            upstream._leave(
                Recorded(
                    host=host,
                    method=self.command,
                    path=parts.path,
                    query=query,
                    headers=headers,
                    started=started,
                    finished=time.monotonic(),
                    status=status,
                    body=body,
                    raw_query=parts.query,
                ),
                generation,
            )

    def _write(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        total = len(reply.body) * reply.repeat
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(reply.repeat):
                if reply.body:
                    self.wfile.write(f"{len(reply.body):x}\r\n".encode() + reply.body + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        declared = reply.declared_length if reply.declared_length is not None else total
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        if self.command == "HEAD":
            return
        for _ in range(reply.repeat):
            if not reply.trickle:
                self.wfile.write(reply.body)
                continue
            for start in range(0, len(reply.body), 4096):
                self.wfile.write(reply.body[start : start + 4096])
                self.wfile.flush()
                time.sleep(reply.trickle)
        if declared != total:
            # A body that ends before its declared length: hang up.
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
