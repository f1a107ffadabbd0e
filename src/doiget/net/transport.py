"""The connection layer: host map, SSRF pinning and TLS, as an httpx transport.

httpcore keys its pool by (scheme, host name, port) and verifies TLS against the
host name; the network backend below decides which *address* a new connection goes
to. So a connection is opened to the address that passed the SSRF check (never to a
second lookup), TLS still verifies the real name, and a pooled connection verified
for one name never carries a request for another.
"""

from __future__ import annotations

import ssl
import typing
from collections.abc import Iterable
from pathlib import Path

import anyio
import certifi
import httpcore
import httpx

from doiget.hostmap import HostMap
from doiget.net.addresses import resolve_public

SocketOption: typing.TypeAlias = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


def build_ssl_context(extra_ca_bundle: Path | None = None) -> ssl.SSLContext:
    """Verify against certifi's roots plus, for the test seam, an extra CA bundle."""
    context = ssl.create_default_context(cafile=certifi.where())
    if extra_ca_bundle is not None:
        context.load_verify_locations(cafile=str(extra_ca_bundle))
    return context


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to checked addresses.

    - A host in the host map goes to its loopback target (the test seam).
    - A host the operator configured (``trusted_hosts``) is resolved normally.
    - Any other host is resolved once; every address must be public; the connection
      goes to one of those very addresses.
    """

    def __init__(
        self,
        host_map: HostMap,
        trusted_hosts: Iterable[str] = (),
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._host_map = host_map
        self._trusted = frozenset(host.lower() for host in trusted_hosts)
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        target = self._host_map.lookup(host)
        if target is not None:
            return await self._inner.connect_tcp(
                target.address, target.port, timeout, local_address, socket_options
            )
        if host.lower() in self._trusted:
            return await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        try:
            with anyio.fail_after(timeout):
                addresses = await resolve_public(host, port)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        last_error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("doiget never connects to unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool built on :class:`GuardedBackend`."""

    def __init__(self, ssl_context: ssl.SSLContext, backend: httpcore.AsyncNetworkBackend) -> None:
        super().__init__(verify=ssl_context, trust_env=False, http1=True, http2=False)
        # httpx offers no parameter for the network backend; the pool it built above
        # is replaced by the same pool on ours, so request and exception mapping stay
        # httpx's own.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            http1=True,
            http2=False,
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            network_backend=backend,
        )
