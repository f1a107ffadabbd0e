"""The process-wide network: one rate gate, one TLS context, one client per source."""

from __future__ import annotations

import ssl

import httpcore
import httpx

from doiget.config import Settings, secret_values
from doiget.net.allowlist import Allowlist, allowlist_for
from doiget.net.budget import FileBudget, RedisBudget
from doiget.net.client import RequestTimeouts, RetryPolicy, SourceClient, user_agent
from doiget.net.ratelimit import RateLimiter
from doiget.net.transport import GuardedBackend, GuardedTransport, build_ssl_context
from doiget.redaction import remember_secrets
from doiget.upstreams import all_upstreams, find


def keyed_sources(settings: Settings) -> frozenset[str]:
    """The upstreams whose declared key is configured (they get their keyed ceiling)."""
    return frozenset(
        upstream.name
        for upstream in all_upstreams()
        if upstream.keyed_by is not None and settings.value(upstream.keyed_by) is not None
    )


def shared_budget(settings: Settings) -> FileBudget | RedisBudget:
    """The request budget every doiget process using these settings shares: in Redis
    when REDIS_URL is set, else in a file in the data directory."""
    if settings.redis_url:
        return RedisBudget(settings.redis_url)
    return FileBudget(settings.data_dir / "rate-budget.json")


class Network:
    """Builds and owns the source clients of one process.

    ``inner_backend`` replaces the socket layer under the SSRF guard (tests use it to
    observe connection attempts); ``retry`` shortens backoff in tests. Neither can
    loosen the rate limits, the allowlists or the guard.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        retry: RetryPolicy | None = None,
        inner_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.settings = settings
        self._budget = shared_budget(settings)
        self.limiter = RateLimiter(keyed_sources(settings), self._budget)
        self._secrets = secret_values(settings)
        remember_secrets(self._secrets)
        self._retry = retry or RetryPolicy()
        self.timeouts = RequestTimeouts.of(
            api=settings.api_timeout, pdf=settings.pdf_timeout, page=settings.page_timeout
        )
        self._inner_backend = inner_backend
        self._ssl_context: ssl.SSLContext | None = None
        self._clients: dict[str, SourceClient] = {}

    def client(
        self,
        source: str,
        *,
        any_public_host: bool = False,
        endpoint: str | None = None,
    ) -> SourceClient:
        """The client of ``source`` (built on first use, then reused).

        Papers and scholar sources are https-only and bound to their allowlist; web
        sources (``any_public_host=True``) take http and https to any public host.
        ``endpoint`` is an operator-configured base URL (by default the one the
        upstream's declared endpoint setting holds, such as SEARXNG_URL): the client
        is bound to its host and scheme, and that host may be private.
        """
        existing = self._clients.get(source)
        if existing is not None:
            return existing
        upstream = find(source)
        if endpoint is None and upstream is not None and upstream.endpoint is not None:
            endpoint = self.settings.text(upstream.endpoint)
        if self._ssl_context is None:
            self._ssl_context = build_ssl_context(self.settings.ca_bundle)
        trusted: tuple[str, ...] = ()
        https_only = not any_public_host
        allowlist = allowlist_for(
            source, self.settings.extra_allowlist, any_public_host=any_public_host
        )
        if endpoint is not None:
            configured = httpx.URL(endpoint)
            trusted = (configured.host,)
            https_only = configured.scheme == "https"
            allowlist = Allowlist(source, trusted, follow_doi_resolvers=False)
        backend = GuardedBackend(self.settings.host_map, trusted, self._inner_backend)
        http = httpx.AsyncClient(
            transport=GuardedTransport(self._ssl_context, backend),
            follow_redirects=False,
            trust_env=False,
            headers={"User-Agent": user_agent(self.settings.email)},
        )
        client = SourceClient(
            source,
            http,
            allowlist,
            self.limiter,
            https_only=https_only,
            blocked_hosts=self.settings.blocked_hosts,
            retry=self._retry,
            secrets=self._secrets,
            trusted_hosts=trusted,
            timeouts=self.timeouts,
            paths=upstream.paths if upstream is not None else (),
        )
        self._clients[source] = client
        return client

    async def aclose(self) -> None:
        """Close every source's connection pool."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()
        if isinstance(self._budget, RedisBudget):
            await self._budget.aclose()
