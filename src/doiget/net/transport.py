"""The connection layer: host map, SSRF pinning and TLS, as an httpx transport.

httpcore keys its pool by (scheme, host name, port) and verifies TLS against the
host name; the network backend below decides which *address* a new connection goes
to. So a connection is opened to the address that passed the SSRF check (never to a
second lookup), TLS still verifies the real name, and a pooled connection verified
for one name never carries a request for another.
"""

from __future__ import annotations

import contextlib
import ssl
import typing
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
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


# httpcore's errors as httpx's, most specific first (httpx's own transport maps the same).
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for source, target in _ERRORS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


class _ResponseBody(httpx.AsyncByteStream):
    """A response body read from the pool, its errors raised as httpx's."""

    def __init__(self, chunks: AsyncIterable[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._chunks:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            await close()


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore connection pool built on the guarded backend.

    Request extensions (the rate gate's ``trace`` hook, timeouts) pass through to
    httpcore untouched.
    """

    def __init__(self, ssl_context: ssl.SSLContext, backend: httpcore.AsyncNetworkBackend) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            http1=True,
            http2=False,
            max_connections=20,
            max_keepalive_connections=10,
            keepalive_expiry=5.0,
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseBody(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
