"""doiget for a team: the MCP Streamable HTTP transport of the official SDK at
``/mcp``, under uvicorn, with bearer-token authentication on by default.

Every tool behaves as over stdio (the same :class:`~doiget.server.app.DoigetServer`):
structured results, progress notifications, resources and resource links,
cancellation. Around it:

- ``/mcp`` needs a valid bearer token (401 with ``WWW-Authenticate`` otherwise, and
  nothing else); each token has a request rate (429 with ``Retry-After`` above it), and
  so has each client address for requests without a valid token.
- Each token holds a bounded number of MCP sessions (:mod:`doiget.server.httpsessions`);
  connections that do not send a request are closed (:mod:`doiget.server.connections`).
- Host and Origin are checked against the allowed names (DNS-rebinding protection as
  the MCP transport spec requires); request bodies are capped; CORS is off unless
  origins are configured.
- ``/healthz`` (liveness) and ``/readyz`` (store, log, Redis, Qdrant reachable) are
  open and say nothing beyond that.
- One JSON line per request on stderr: token id (never the token; ``-`` without a
  valid one), JSON-RPC method, tool, status, duration.
- SIGTERM stops accepting, lets in-flight calls finish within the grace period, then
  closes the toolsets (ending the provenance session) and exits 0.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from typing import Any, Final

from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from doiget import metrics
from doiget.health import check_health
from doiget.jsontext import parse_json
from doiget.runtime import Runtime
from doiget.server.app import DoigetServer
from doiget.server.connections import uvicorn_limits
from doiget.server.httpauth import Authentication, authentication, provider_down
from doiget.server.httpsessions import PerTokenSessions
from doiget.server.oauth.gate import ScopeGate
from doiget.server.tokens import holder as _holder

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("doiget.http")
MCP_PATH: Final = "/mcp"
# How much of a request body is read to name the JSON-RPC method and tool in the log.
PEEK_BYTES: Final = 64 * 1024
SETTLE_SECONDS: Final = 0.5
# Request budgets kept at most (client addresses are not a closed set).
MAX_HOLDERS: Final = 10_000
UNAUTHENTICATED: Final = "-"


class _Tokens:
    """Per-holder request budget (a token, or a client address): a bucket of ``rate``
    a minute, refilled continuously. At most :data:`MAX_HOLDERS` buckets are kept: a
    new holder beyond them first drops the buckets that have refilled, then the oldest.
    """

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.per_second = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}

    def wait_for(self, holder: str) -> float:
        """0 when ``holder`` may go now (and spends one), else seconds until it may."""
        now = time.monotonic()
        if holder not in self._buckets and len(self._buckets) >= MAX_HOLDERS:
            self._forget(now)
        level, then = self._buckets.pop(holder, (self.capacity, now))
        level = min(self.capacity, level + (now - then) * self.per_second)
        if level >= 1.0:
            self._buckets[holder] = (level - 1.0, now)
            return 0.0
        self._buckets[holder] = (level, now)
        return (1.0 - level) / self.per_second

    def _forget(self, now: float) -> None:
        """Make room for one more bucket: full ones go, then the least recently used."""
        for holder, (level, then) in list(self._buckets.items()):
            if level + (now - then) * self.per_second >= self.capacity:
                del self._buckets[holder]
        while len(self._buckets) >= MAX_HOLDERS:
            del self._buckets[next(iter(self._buckets))]


def _rate_limited(wait: float) -> Response:
    seconds = math.ceil(wait)
    return JSONResponse(
        {"error": f"rate limit: try again in {seconds} s"},
        status_code=429,
        headers={"Retry-After": str(seconds)},
    )


def _jsonrpc_names(body: bytes) -> tuple[str | None, str | None]:
    """(method, tool name) of a JSON-RPC request body, when it is one."""
    try:
        message = parse_json(body)
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    method = message.get("method")
    return (
        method if isinstance(method, str) else None,
        tool if isinstance(tool, str) and method == "tools/call" else None,
    )


class Drain:
    """What a graceful stop waits for: the POSTs (calls) in flight.

    Server-sent-event streams would otherwise end at the first signal, cutting the
    answers of calls still running; so they stay open until no call is in flight,
    and only then are the idle streams (a client's GET stream) closed.
    """

    def __init__(self) -> None:
        self.in_flight = 0
        self.stopping = False

    async def watch(self) -> None:
        """Close the event streams once stopping and no call is left (runs until then)."""
        import anyio
        from sse_starlette.sse import AppStatus

        while not (self.stopping and self.in_flight == 0):
            await anyio.sleep(0.05)
        # The last answers are on their way to their clients: let them arrive before
        # the streams the clients listen on close.
        await anyio.sleep(SETTLE_SECONDS)
        AppStatus.should_exit = True


class RequestLog:
    """One JSON line per request on stderr (token id, method, tool, status, duration),
    the per-token rate limit, and the count of calls in flight."""

    def __init__(self, app: ASGIApp, budget: _Tokens, drain: Drain) -> None:
        self.app = app
        self.budget = budget
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        holder = _holder(scope)
        wait = self.budget.wait_for(holder)
        record: dict[str, Any] = {"token": holder, "http": scope["method"], "status": None}
        if wait > 0:
            record["status"] = 429
            await _rate_limited(wait)(scope, receive, send)
            self._write(record, started)
            return
        replay = await self._peek(receive, record)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
            await send(message)

        counted = scope["method"] == "POST"
        self.drain.in_flight += counted
        try:
            await self.app(scope, replay, sending)
        finally:
            self.drain.in_flight -= counted
            self._write(record, started)

    async def _peek(self, receive: Receive, record: dict[str, Any]) -> Receive:
        """Read the start of the body to name the call, then hand it on unchanged."""
        held: list[Message] = []
        seen = b""
        while len(seen) < PEEK_BYTES:
            message = await receive()
            held.append(message)
            seen += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        record["method"], record["tool"] = _jsonrpc_names(seen)

        async def replay() -> Message:
            return held.pop(0) if held else await receive()

        return replay

    @staticmethod
    def _write(record: dict[str, Any], started: float) -> None:
        record["ms"] = round((time.perf_counter() - started) * 1000, 1)
        fields = {key: value for key, value in record.items() if value is not None}
        access_log.info(json.dumps(fields, separators=(",", ":")))


class AuthGate:
    """Bearer authentication in front of ``app``: a request without a valid token gets
    401, is logged (token id ``-``), and such requests are rate-limited per client
    address (429 with ``Retry-After``) before anything else is done for them."""

    def __init__(
        self, app: ASGIApp, budget: _Tokens, metadata_url: AnyHttpUrl | None = None
    ) -> None:
        self.guarded = RequireAuthMiddleware(
            app, required_scopes=[], resource_metadata_url=metadata_url
        )
        self.budget = budget

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or isinstance(scope.get("user"), AuthenticatedUser):
            await self.guarded(scope, receive, send)
            return
        started = time.perf_counter()
        record: dict[str, Any] = {
            "token": UNAUTHENTICATED,
            "http": scope["method"],
            "path": scope["path"],
            "status": None,
        }
        client = scope.get("client")
        wait = self.budget.wait_for(str(client[0]) if client else UNAUTHENTICATED)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
            await send(message)

        refusal = _rate_limited(wait) if wait > 0 else self.guarded
        await refusal(scope, receive, sending)
        RequestLog._write(record, started)


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _readiness(runtime: Runtime) -> dict[str, bool]:
    """Whether each part a call needs is there (names and booleans only)."""
    settings = runtime.settings
    health = check_health(settings)
    checks = {"store": bool(health["store_writable"]), "log": bool(health["log_writable"])}
    if settings.redis_url:
        checks["redis"] = _pings(lambda: _redis_ping(settings.redis_url or ""))
    if settings.qdrant_url:
        checks["qdrant"] = _pings(lambda: _qdrant_ping(settings.qdrant_url or ""))
    return checks


def _pings(probe: Callable[[], object]) -> bool:
    try:
        probe()
    except Exception:  # reachable or not is all this reports
        return False
    return True


def _redis_ping(url: str) -> object:
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        return client.ping()
    finally:
        client.close()


def _qdrant_ping(url: str) -> object:
    from qdrant_client import QdrantClient

    client = QdrantClient(url=url, timeout=2)
    try:
        return client.get_collections()
    finally:
        client.close()


def build_app(
    runtime: Runtime, drain: Drain | None = None, auth: Authentication | None = None
) -> tuple[Starlette, DoigetServer]:
    """The ASGI application of one replica, and the doiget server inside it."""
    import anyio

    drain = drain or Drain()
    http = runtime.settings.http
    auth = auth or authentication(runtime)
    verifier = auth.verifier
    doiget = DoigetServer(runtime)
    doiget.scopes = auth.tool_scopes(doiget.read_only_tools())
    manager = PerTokenSessions(
        app=doiget.build(),
        per_token=http.max_sessions,
        session_idle_timeout=http.session_idle,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=http.host_headers(),
            allowed_origins=list(http.allowed_origins),
        ),
        max_request_body_size=http.max_body_bytes,
    )
    calls: ASGIApp = manager.handle_request
    if doiget.scopes is not None:
        calls = ScopeGate(calls, doiget.scopes, http.max_body_bytes)
    mcp: ASGIApp = RequestLog(calls, _Tokens(http.rate_per_minute), drain)
    middleware = []
    unauthenticated = _Tokens(http.unauth_rate_per_minute)
    if verifier is not None:
        mcp = AuthGate(mcp, unauthenticated, auth.metadata_url)
        middleware.append(
            Middleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(verifier),
                on_error=provider_down,
            )
        )
    if http.allowed_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(http.allowed_origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["Authorization", "Content-Type", "Mcp-Session-Id"],
                expose_headers=["Mcp-Session-Id"],
            )
        )

    async def metrics_page(request: Request) -> Response:
        body, content_type = metrics.exposition()
        return Response(body, media_type=content_type)

    async def readyz(request: Request) -> Response:
        checks = await anyio.to_thread.run_sync(_readiness, runtime)
        if auth.oauth is not None:
            checks["identity_provider_keys"] = await auth.oauth.keys.check()
        ready = all(checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(drain.watch)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
                await doiget.close()  # ends the provenance session, closes the network

    routes = [
        Route("/healthz", _healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"]),
        *auth.routes(),
    ]
    if http.metrics:
        metrics.enable()
        page: ASGIApp = Route("/metrics", metrics_page, methods=["GET"])
        if verifier is not None:
            page = AuthGate(page, unauthenticated, auth.metadata_url)
        routes.append(Route("/metrics", page, methods=["GET"]))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
    )
    return app, doiget


def _server(config: Any, drain: Drain) -> Any:
    """uvicorn's server, made to return after a graceful shutdown on SIGTERM/SIGINT
    (uvicorn itself re-raises the signal afterwards, so the status would be -15),
    remembering which signal came (``stopped_by``), and to let calls in flight finish
    (see :class:`Drain`)."""
    import threading

    import uvicorn
    from sse_starlette.sse import AppStatus

    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]

    class Server(uvicorn.Server):
        stopped_by: int | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            drain.stopping = True
            self.stopped_by = self.stopped_by or sig
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)


def serve_http(runtime: Runtime) -> None:
    """Serve until SIGTERM or SIGINT, then drain within the grace period and exit:
    status 0 after SIGTERM, 130 after Ctrl-C, as for any other command."""
    import uvicorn

    http = runtime.settings.http
    drain = Drain()
    auth = authentication(runtime)
    app, _ = build_app(runtime, drain, auth)
    access_log.setLevel(logging.INFO)
    if not access_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access_log.addHandler(handler)
        access_log.propagate = False
    config = uvicorn.Config(
        app,
        host=http.host,
        port=http.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(http.shutdown_grace),
        server_header=False,
        **uvicorn_limits(http.header_timeout, http.max_connections),
    )
    if runtime.settings.redis_url and runtime.settings.cache_key is None:
        print(
            "[doiget] note: REDIS_URL is set but DOIGET_CACHE_KEY is not; replicas can read "
            "each other's sessions and cache entries only when they share DOIGET_CACHE_KEY.",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"[doiget] serving MCP over HTTP at http://{http.host}:{http.port}{MCP_PATH} "
        f"({auth.describe()})",
        file=sys.stderr,
        flush=True,
    )
    server = _server(config, drain)
    server.run()
    if server.stopped_by == signal.SIGINT:
        raise SystemExit(128 + signal.SIGINT)
