"""Helpers for web toolset tests: a settable clock and a loopback HTTP server."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class _Logged(BaseHTTPRequestHandler):
    server: _LoggingServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.log.append(self.path)
        body = self.server.body
        self.send_response(200)
        self.send_header("Content-Type", self.server.content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _LoggingServer(ThreadingHTTPServer):
    def __init__(self, body: bytes, content_type: str) -> None:
        super().__init__(("127.0.0.1", 0), _Logged)
        self.log: list[str] = []
        self.body = body
        self.content_type = content_type


@contextmanager
def loopback_server(
    body: bytes = b"secret internal page", content_type: str = "text/plain"
) -> Iterator[_LoggingServer]:
    """A real HTTP server on 127.0.0.1 recording every request path in ``.log``."""
    server = _LoggingServer(body, content_type)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class Clock:
    """A clock a test sets by hand (breakers, cache expiry, artifacts)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class _JsonDriven:
    """A core driven the way its faces drive it: JSON arguments parsed into each
    method's request model (bad ones fail on await, as a tool call does).

    ``REQUESTS`` names the request model of each method so driven; other attributes
    pass through untouched.
    """

    REQUESTS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, core: Any) -> None:
        self.core = core

    def __getattr__(self, name: str) -> Any:
        from doiget.contract import parse
        from doiget.web import requests

        model = self.REQUESTS.get(name)
        method = getattr(self.core, name)
        if model is None:
            return method

        async def call(arguments: dict[str, Any]) -> Any:
            return self._out(await method(parse(getattr(requests, model), arguments)))

        return call

    def _out(self, result: Any) -> Any:
        return result


class JsonResearch(_JsonDriven):
    """Research sessions driven the way the tools drive them: JSON in, JSON out."""

    REQUESTS: ClassVar[Mapping[str, str]] = {
        "step": "ResearchStepRequest",
        "session": "ResearchSessionRequest",
        "export": "ResearchExportRequest",
    }

    def _out(self, result: Any) -> Any:
        return result.wire()


class JsonCore(_JsonDriven):
    """A web core driven the way its faces drive it: JSON in, typed results out."""

    REQUESTS: ClassVar[Mapping[str, str]] = {
        "search": "WebSearchRequest",
        "scrape": "ScrapePageRequest",
        "search_and_scrape": "SearchAndScrapeRequest",
        "academic_search": "AcademicSearchRequest",
        "patent_search": "PatentSearchRequest",
        "research_step": "ResearchStepRequest",
        "research_session": "ResearchSessionRequest",
        "research_export": "ResearchExportRequest",
    }


@asynccontextmanager
async def open_core(env: dict[str, str], **options: Any) -> AsyncIterator[Any]:
    """A WebCore built from ``env`` as the program builds it, closed afterwards."""
    from doiget.config import load_settings
    from doiget.web.service import WebCore

    from netutil import make_network

    network = make_network(env)
    web = WebCore(load_settings(env), network, **options)
    try:
        yield JsonCore(web)
    finally:
        await network.aclose()
        await web.aclose()
