"""Source clients: the only way doiget code sends an HTTP request.

Each upstream source gets its own :class:`SourceClient` (own connection pool, own
allowlist). Every request goes through the same steps:

1. destination checks on the first URL and every redirect hop: scheme, block list,
   allowlist, non-public IP literals (each refusal a :class:`DenialContext`);
2. the rate gate (:mod:`doiget.net.ratelimit`);
3. the guarded transport (host map, SSRF pinning, TLS);
4. retries for what may pass on a second try (a dropped connection, 408/429/5xx),
   honouring Retry-After; everything else is final (:mod:`doiget.net.classify`);
5. size caps, enforced on the declared length and again while streaming.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import random
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import httpx

from doiget import __version__, metrics
from doiget.diskerror import write_error
from doiget.errors import DenialContext, DenialReason, DoigetError, ErrorCode, denied
from doiget.jsontext import parse_json
from doiget.net.addresses import AddressRefused, check_literal
from doiget.net.allowlist import Allowlist, is_blocked
from doiget.net.classify import Fate, Permanent, Verdict, classify
from doiget.net.deadline import RequestClock, time_left
from doiget.net.offline import Offline
from doiget.net.ratelimit import RateLimiter
from doiget.net.redact import redact_text, redact_url

logger = logging.getLogger("doiget.net")

MAX_REDIRECTS: Final = 10
BODY_CAP_BYTES: Final = 100 * 1024 * 1024
JSON_CAP_BYTES: Final = 20 * 1024 * 1024
RETRYABLE_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504})
PDF_MAGIC: Final = b"%PDF-"
# Readers accept a PDF header anywhere in the first KiB (junk before it is common).
PDF_MAGIC_WINDOW: Final = 1024

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds allowed to connect, between two reads, and for a whole request, and the
    setting that sets them (named when a request runs out of time)."""

    connect: float
    read: float
    total: float
    setting: str = ""

    @classmethod
    def within(cls, total: float, setting: str, *, read: float | None = None) -> Timeouts:
        """At most ``total`` seconds in all; connecting gets at most 10 of them."""
        return cls(
            connect=min(CONNECT_SECONDS, total),
            read=min(read if read is not None else total, total),
            total=total,
            setting=setting,
        )


@dataclass(frozen=True, slots=True)
class RequestTimeouts:
    """The time limits of each kind of request, from the settings."""

    api: Timeouts
    pdf: Timeouts
    page: Timeouts

    @classmethod
    def of(cls, api: float, pdf: float, page: float) -> RequestTimeouts:
        """Metadata/search requests, PDF downloads (60 s at most between two reads)
        and web pages."""
        return cls(
            api=Timeouts.within(api, "DOIGET_API_TIMEOUT"),
            pdf=Timeouts.within(pdf, "DOIGET_PDF_TIMEOUT", read=PDF_READ_SECONDS),
            page=Timeouts.within(page, "DOIGET_PAGE_TIMEOUT"),
        )

    def call_seconds(self, *, api: bool = False, pdf: bool = False, page: bool = False) -> float:
        """A call's overall budget across its retries, fallbacks and candidates: twice
        the limit of each kind of metadata/search or page request it makes (so retries
        and fallbacks have room) plus one PDF download's limit."""
        return (
            (2 * self.api.total if api else 0.0)
            + (self.pdf.total if pdf else 0.0)
            + (2 * self.page.total if page else 0.0)
        )


CONNECT_SECONDS: Final = 10.0
PDF_READ_SECONDS: Final = 60.0
DEFAULT_TIMEOUTS: Final = RequestTimeouts.of(api=30.0, pdf=300.0, page=30.0)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Up to ``max_retries`` retries, backoff from ``base_delay`` with jitter.

    A Retry-After longer than ``max_wait`` is not waited out: the call fails with
    RATE_LIMITED and says when to try again.
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_wait: float = 60.0

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt + 1``: exponential, with full jitter added."""
        base: float = self.base_delay * 2.0**attempt
        return base + random.uniform(0, base / 2)


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response read whole (under its cap)."""

    url: str
    status: int
    headers: httpx.Headers
    content: bytes
    hops: int
    # True when the body was cut at the caller's byte limit (``get(..., truncate=True)``).
    truncated: bool = False

    @property
    def text(self) -> str:
        """The body decoded with the declared charset (UTF-8 when none)."""
        return decoded_body(self.content, str(self.headers.get("content-type", "")))

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-case ('' when absent)."""
        declared = str(self.headers.get("content-type", ""))
        return declared.split(";", 1)[0].strip().lower()


def decoded_body(content: bytes, content_type: str) -> str:
    """``content`` decoded as a response of this Content-Type is (its charset, else UTF-8)."""
    text: str = httpx.Response(200, headers={"content-type": content_type}, content=content).text
    return text


@dataclass(frozen=True, slots=True)
class DownloadedPdf:
    """A PDF that passed its checks, in a temp file beside its destination."""

    path: Path
    size_bytes: int
    sha256: str
    url: str


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    url: httpx.URL
    headers: Mapping[str, str] | None
    body: bytes | None


@dataclass(frozen=True, slots=True)
class _Redirect:
    location: httpx.URL


@dataclass(slots=True)
class _Failure:
    """What went wrong on the latest attempt, and how long to wait before the next."""

    what: str
    status: int | None = None
    retry_after: float | None = None
    wait: float = 0.0


class SourceClient:
    """HTTP access for one upstream source. Build it through :class:`doiget.net.Network`."""

    def __init__(
        self,
        source: str,
        http: httpx.AsyncClient,
        allowlist: Allowlist,
        limiter: RateLimiter,
        *,
        https_only: bool,
        blocked_hosts: Collection[str],
        retry: RetryPolicy,
        secrets: Collection[str] = (),
        trusted_hosts: Collection[str] = (),
        timeouts: RequestTimeouts = DEFAULT_TIMEOUTS,
        paths: Collection[str] = (),
    ) -> None:
        self.source = source
        self.timeouts = timeouts
        self.allowlist = allowlist
        self._http = http
        self._limiter = limiter
        self._https_only = https_only
        self._blocked = tuple(blocked_hosts)
        self._retry = retry
        self._secrets = [secret for secret in secrets if secret]
        # Operator-configured endpoints (SEARXNG_URL ...) may be private addresses.
        self._trusted = frozenset(host.lower() for host in trusted_hosts)
        # Path prefixes an operator endpoint is bound to (none: any path).
        self._paths = tuple(paths)

    async def aclose(self) -> None:
        """Close this source's connection pool."""
        await self._http.aclose()

    # -- public calls -------------------------------------------------------------

    async def get(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        max_bytes: int = JSON_CAP_BYTES,
        accept_status: Collection[int] = (),
        from_upstream: bool = False,
        timeouts: Timeouts | None = None,
        truncate: bool = False,
    ) -> Fetched:
        """GET ``url`` and read the body whole, under ``max_bytes`` (never above 100 MB).

        ``accept_status`` lists error statuses the caller wants back as a response
        (e.g. an API's 400 body) instead of an error. ``from_upstream`` marks a URL
        taken from upstream data: an ``http://`` link to an allowlisted host is then
        upgraded to https before the request. ``truncate`` keeps the first
        ``max_bytes`` of a longer body (and says so) instead of refusing it.
        ``timeouts`` defaults to the metadata/search request limits.
        """
        read = self._reader(min(max_bytes, BODY_CAP_BYTES), truncate)
        limits = timeouts or self.timeouts.api
        return await self._fetch(
            "GET", url, params, headers, None, accept_status, from_upstream, limits, read
        )

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        headers: Mapping[str, str] | None = None,
        accept_status: Collection[int] = (),
    ) -> Fetched:
        """POST ``body`` and read the answer (20 MB cap); redirects are refused."""
        return await self._fetch(
            "POST",
            url,
            None,
            headers,
            body,
            accept_status,
            False,
            self.timeouts.api,
            self._reader(JSON_CAP_BYTES, truncate=False),
        )

    async def send(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        accept_status: Collection[int] = (),
    ) -> Fetched:
        """Any method but DELETE (doiget deletes nothing upstream), answer read whole
        (20 MB cap); a redirect is followed for GET only."""
        if method.upper() == "DELETE":
            raise ValueError("doiget never sends DELETE")
        return await self._fetch(
            method.upper(),
            url,
            params,
            headers,
            body,
            accept_status,
            False,
            self.timeouts.api,
            self._reader(JSON_CAP_BYTES, truncate=False),
        )

    async def post_json(
        self,
        url: str,
        payload: Any,
        *,
        headers: Mapping[str, str] | None = None,
        accept_status: Collection[int] = (),
    ) -> Any:
        """POST a JSON body and read a JSON answer."""
        sent = {"Accept": "application/json", "Content-Type": "application/json"}
        fetched = await self.post(
            url,
            json.dumps(payload).encode("utf-8"),
            headers={**sent, **(headers or {})},
            accept_status=accept_status,
        )
        return self.json_of(fetched)

    def _reader(
        self, cap: int, truncate: bool
    ) -> Callable[[httpx.Response, int], Awaitable[Fetched]]:
        async def read(response: httpx.Response, hops: int) -> Fetched:
            body = bytearray()
            cut = False
            chunks = (
                response.aiter_bytes() if truncate else self._capped_chunks(response, cap, hops)
            )
            async for chunk in chunks:
                body.extend(chunk)
                if len(body) > cap:
                    del body[cap:]
                    cut = True
                    break
            return Fetched(
                str(response.url), response.status_code, response.headers, bytes(body), hops, cut
            )

        return read

    async def get_json(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        accept_status: Collection[int] = (),
    ) -> Any:
        """GET a JSON document (20 MB cap). A body that is not JSON is ``schema_drift``."""
        fetched = await self.get(
            url,
            params=params,
            headers={"Accept": "application/json", **(headers or {})},
            max_bytes=JSON_CAP_BYTES,
            accept_status=accept_status,
        )
        return self.json_of(fetched)

    def json_of(self, fetched: Fetched) -> Any:
        """The JSON document in ``fetched``; a body that is not JSON is ``schema_drift``."""
        try:
            return parse_json(fetched.content)
        except ValueError as exc:
            raise self.schema_drift(
                f"answered {redact_url(fetched.url)} with a body that is not JSON"
            ) from exc

    @asynccontextmanager
    async def download_pdf(
        self,
        url: str,
        dest_dir: Path,
        *,
        max_bytes: int = BODY_CAP_BYTES,
        from_upstream: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[DownloadedPdf]:
        """Download a PDF into a temp file in ``dest_dir`` and yield it.

        The body must start with ``%PDF-`` (within its first KiB) whatever the
        Content-Type says; only then is a byte written to disk. The temp file is
        fsynced before it is yielded; the caller renames it into place. If the caller
        has not moved it when the block ends (or anything fails), it is removed.
        """
        cap = min(max_bytes, BODY_CAP_BYTES)

        async def save(response: httpx.Response, hops: int) -> DownloadedPdf:
            return await self._save_pdf(response, hops, cap, dest_dir)

        downloaded = await self._fetch(
            "GET", url, None, headers, None, (), from_upstream, self.timeouts.pdf, save
        )
        try:
            yield downloaded
        finally:
            with suppress(FileNotFoundError):
                downloaded.path.unlink()

    # -- errors that sources raise through their client ---------------------------

    def schema_drift(self, what: str) -> DoigetError:
        """An upstream answer that does not have the shape this source expects."""
        return denied(
            ErrorCode.NETWORK_ERROR,
            self._scrub(
                f"{self.source} {what}; its API may have changed. Retry later or report it."
            ),
            DenialReason.SCHEMA_DRIFT,
            source=self.source,
        )

    # -- the request pipeline -----------------------------------------------------

    async def _fetch(
        self,
        method: str,
        url: str,
        params: Mapping[str, str | int] | None,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        accept_status: Collection[int],
        from_upstream: bool,
        timeouts: Timeouts,
        consume: Callable[[httpx.Response, int], Awaitable[T]],
    ) -> T:
        try:
            # httpx drops a URL's own query when given ``params=None``: keep it.
            current = httpx.URL(url) if params is None else httpx.URL(url, params=params)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise DoigetError(
                ErrorCode.INVALID_REF, f"{redact_url(url)} is not a valid URL: {exc}"
            ) from exc
        upgradable = from_upstream and self.allowlist.patterns is not None
        if upgradable and current.scheme == "http" and self.allowlist.allows(current.host):
            current = current.copy_with(scheme="https")
        origin = (current.scheme, current.host, current.port)
        for hop in range(MAX_REDIRECTS + 1):
            try:
                self._check_destination(current, hop)
            except (httpx.InvalidURL, UnicodeError) as exc:
                raise self._unusable_url(redact_url(str(current)), exc, hop) from None
            same_origin = (current.scheme, current.host, current.port) == origin
            request = _Request(method, current, _headers_for_hop(headers, same_origin), body)
            outcome = await self._attempts(request, hop, accept_status, timeouts, consume)
            if not isinstance(outcome, _Redirect):
                return outcome
            if method != "GET":
                raise DoigetError(
                    ErrorCode.NETWORK_ERROR,
                    f"{self.source} answered a {method} to {redact_url(str(current))} with a "
                    "redirect; its API may have moved. Check the configured endpoint.",
                )
            current = outcome.location
        raise denied(
            ErrorCode.CAPABILITY_DENIED,
            f"{self.source}: more than {MAX_REDIRECTS} redirects starting at {redact_url(url)}; "
            "the link loops or is not a direct link to the resource.",
            DenialReason.REDIRECT_NOT_IN_ALLOWLIST,
            source=self.source,
            attempted=current.host,
            hop_index=MAX_REDIRECTS + 1,
            cap=MAX_REDIRECTS,
            actual=MAX_REDIRECTS + 1,
        )

    def _check_destination(self, url: httpx.URL, hop: int) -> None:
        allowed_schemes = ("https",) if self._https_only else ("https", "http")
        if url.scheme not in allowed_schemes:
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.source}: refused {url.scheme}:// at hop {hop} ({redact_url(str(url))}); "
                f"only {' or '.join(allowed_schemes)} is followed.",
                DenialReason.INSECURE_SCHEME,
                source=self.source,
                attempted=redact_url(str(url)),
                expected=allowed_schemes,
                hop_index=hop,
            )
        host = url.host
        if not host:
            raise httpx.InvalidURL("the URL has no host")
        if is_blocked(host, self._blocked):
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.source}: {host} is on the configured block list.",
                DenialReason.HOST_IN_BLOCK_LIST,
                source=self.source,
                attempted=host,
                hop_index=hop,
            )
        if not self.allowlist.allows(host):
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.source}: {host} (hop {hop}) is not on this source's allowlist; "
                "add it under [allowlist] in config.toml if you trust it.",
                DenialReason.REDIRECT_NOT_IN_ALLOWLIST,
                source=self.source,
                attempted=host,
                expected=self.allowlist.expected(),
                hop_index=hop,
            )
        if self._paths and (not url.path.startswith(self._paths) or "/../" in f"{url.path}/"):
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.source}: {redact_url(str(url))} (hop {hop}) is outside the paths this "
                f"endpoint is used for ({', '.join(self._paths)}); doiget requests nothing else "
                "there.",
                DenialReason.REDIRECT_NOT_IN_ALLOWLIST,
                source=self.source,
                attempted=url.path,
                expected=self._paths,
                hop_index=hop,
            )
        if host.lower() in self._trusted:
            return
        try:
            check_literal(host)
        except AddressRefused as exc:
            raise self._ssrf_denial(exc, hop) from None

    def _unusable_url(self, shown: str, exc: Exception, hop: int = 0) -> DoigetError:
        """A URL that cannot be requested (no host, a host that cannot be encoded such
        as a bad IDNA label ...): the caller's bad input at the first hop, an upstream
        that redirects nowhere usable after it. Never a crash, never retried.
        ``shown`` is the URL as it may be shown (redacted)."""
        if hop == 0:
            return DoigetError(
                ErrorCode.INVALID_REF,
                f"{self.source}: {shown} is not a usable URL ({type(exc).__name__}).",
            )
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            self._scrub(
                f"{self.source}: redirect hop {hop} leads to {shown}, which is not "
                f"a usable URL ({type(exc).__name__}); not retried: the link is broken at "
                "its source, use another source."
            ),
            details={"transport": Permanent.UNUSABLE_URL.value, "retryable": False},
        )

    def _ssrf_denial(self, exc: AddressRefused, hop: int) -> DoigetError:
        return denied(
            ErrorCode.CAPABILITY_DENIED,
            f"{self.source}: {exc.host} is or resolves to {exc.address} ({exc.block}), a "
            "private or special-purpose address that is not globally reachable; doiget never "
            "connects there.",
            DenialReason.SSRF_PRIVATE_ADDRESS,
            source=self.source,
            attempted=exc.host,
            hop_index=hop,
        )

    async def _attempts(
        self,
        request: _Request,
        hop: int,
        accept_status: Collection[int],
        timeouts: Timeouts,
        consume: Callable[[httpx.Response, int], Awaitable[T]],
    ) -> T | _Redirect:
        """Send ``request`` until it is answered, retrying only what may pass: a
        dropped connection, 408/429/5xx (see :mod:`doiget.net.classify`). A request
        that ran out of time, a connection that cannot be made and a failure that
        would repeat itself are final."""
        url = request.url
        shown = redact_url(str(url))
        last = _Failure("did not answer")
        http_timeout = httpx.Timeout(
            connect=timeouts.connect, read=timeouts.read, write=timeouts.read, pool=None
        )
        tries = 0
        for attempt in range(self._retry.max_retries + 1):
            if attempt:
                if not _time_for(last.wait):
                    break
                await anyio.sleep(last.wait)
            left = time_left()
            if left is not None and left <= 0:
                raise self._timeout_error(shown, timeouts, call=True)
            held = self._limiter.held_for(self._gate_key(url))
            if held > self._retry.max_wait:
                raise self._rate_limited_error(shown, "asked doiget to back off", held)
            tries += 1
            logger.debug(
                "%s %s %s (hop %d, attempt %d)",
                self.source,
                request.method,
                shown,
                hop,
                attempt + 1,
            )
            clock = RequestClock(timeouts.total)
            try:
                with clock:
                    async with (
                        self._limiter.turn(self._gate_key(url)) as turn,
                        self._limiter.slot(url.host),
                        self._http.stream(
                            request.method,
                            url,
                            headers=request.headers,
                            content=request.body,
                            timeout=http_timeout,
                            extensions={"trace": turn.trace},
                        ) as response,
                    ):
                        status = response.status_code
                        self._counted(f"{status // 100}xx")
                        backoff = _backoff_seconds(response.headers)
                        if backoff is not None:
                            self._limiter.hold(self._gate_key(url), backoff)
                        if response.has_redirect_location:
                            return self._redirect(url, response.headers["location"], hop)
                        if status in RETRYABLE_STATUS and status not in accept_status:
                            last = _Failure(
                                f"answered HTTP {status}",
                                status=status,
                                retry_after=_retry_after_seconds(response.headers),
                            )
                        elif status >= 400 and status not in accept_status:
                            raise self._status_error(status, shown)
                        else:
                            return await consume(response, hop)
            except AddressRefused as exc:
                self._counted("refused")
                raise self._ssrf_denial(exc, hop) from None
            except (httpx.RequestError, httpx.InvalidURL, UnicodeError) as exc:
                last = _Failure(self._final_or_retried(exc, url, hop, timeouts).what)
            if clock.expired:
                self._counted("timeout")
                raise self._timeout_error(shown, timeouts, call=clock.call_ran_out)
            last.wait = (
                self._retry.backoff(attempt) if last.retry_after is None else last.retry_after
            )
            if last.retry_after is not None and last.retry_after > self._retry.max_wait:
                break
        raise self._exhausted_error(shown, last, tries)

    def _final_or_retried(
        self, exc: Exception, url: httpx.URL, hop: int, timeouts: Timeouts
    ) -> Verdict:
        """The verdict on a failed attempt; a final one is raised as its error."""
        shown = redact_url(str(url))
        if isinstance(exc, UnicodeError):
            raise self._unusable_url(shown, exc, hop) from None
        verdict = classify(exc)
        if verdict.fate is Fate.TIMEOUT:
            self._counted("timeout")
            raise self._timeout_error(shown, timeouts, call=False) from None
        self._counted("network")
        if verdict.offline is not None:
            raise self._offline_error(url.host, verdict.offline) from None
        if verdict.permanent is Permanent.UNUSABLE_URL:
            # The URL itself passed its checks before it was sent: what could not be
            # used is the Location the upstream answered with.
            raise self._unusable_url(f"the Location {shown} answered", exc, hop + 1) from None
        if verdict.permanent is not None:
            raise self._permanent_error(shown, verdict, hop) from None
        return verdict

    def _redirect(self, url: httpx.URL, location: str, hop: int) -> _Redirect:
        """Where a redirect leads; a Location that is not a URL is the next hop's
        unusable URL (never blamed on the URL that was redirected)."""
        try:
            return _Redirect(url.join(location))
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise self._unusable_url(redact_url(location), exc, hop + 1) from None

    def _counted(self, outcome: str) -> None:
        metrics.count("upstream_requests", source=self.source, outcome=outcome)

    def _gate_key(self, url: httpx.URL) -> str:
        """What the per-source gap counts: the source, or for a client that may reach
        any public host, each host on its own (one slow site never queues another)."""
        return self.source if self.allowlist.patterns is not None else f"{self.source}:{url.host}"

    def _timeout_error(self, shown: str, timeouts: Timeouts, *, call: bool) -> DoigetError:
        """A request or a call that ran out of time: final, never retried."""
        if call or not timeouts.setting:
            what = "the call's overall time limit ran out"
        else:
            what = f"no answer within {timeouts.total:g} s ({timeouts.setting})"
        return DoigetError(
            ErrorCode.FETCH_TIMEOUT,
            self._scrub(
                f"{self.source}: {shown}: {what}; not retried. Try again later, or raise "
                "the limit if the upstream is known to be slow."
            ),
            retry_after=None,
        )

    def _permanent_error(self, shown: str, verdict: Verdict, hop: int) -> DoigetError:
        """A failure that a second try would repeat: said plainly, not retried."""
        assert verdict.permanent is not None
        tls = verdict.permanent in (Permanent.TLS_CERTIFICATE, Permanent.TLS_HOSTNAME)
        advice = (
            "doiget reads only from hosts whose certificate verifies; use another source"
            if tls
            else "retrying will not help; use another source"
        )
        where = f" (redirect hop {hop})" if hop else ""
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            self._scrub(f"{self.source}: {shown}{where} {verdict.what}; not retried: {advice}."),
            details={"transport": verdict.permanent.value, "retryable": False},
        )

    def _offline_error(self, host: str, cause: Offline) -> DoigetError:
        """No connection could be made at all: said plainly, not retried."""
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"{cause.describe(host)}; check the network connection (not retried).",
            details={"offline": cause.value, "host": host},
        )

    def _status_error(self, status: int, shown: str) -> DoigetError:
        if status in (404, 410):
            return DoigetError(
                ErrorCode.NOT_FOUND,
                f"{self.source} has no record at {shown} (HTTP {status}); check the identifier.",
                details={"status": status},
            )
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            self._scrub(f"{self.source} refused {shown} with HTTP {status}."),
            details={"status": status},
        )

    def _rate_limited_error(self, shown: str, what: str, seconds: float) -> DoigetError:
        wait = max(1, round(seconds))
        return DoigetError(
            ErrorCode.RATE_LIMITED,
            f"{self.source} is rate limiting requests ({shown} {what}); try again in {wait} s.",
            DenialContext(
                DenialReason.RATE_LIMIT_WINDOW, source=self.source, cap=None, actual=wait
            ),
            retry_after=float(wait),
            details={"status": 429},
        )

    def _exhausted_error(self, shown: str, last: _Failure, tries: int) -> DoigetError:
        if last.status == 429:
            return self._rate_limited_error(shown, last.what, last.wait)
        return DoigetError(
            ErrorCode.NETWORK_ERROR,
            self._scrub(
                f"{self.source}: {shown} {last.what} (tried {tries} "
                f"{'time' if tries == 1 else 'times'}); the upstream may be down, try again later."
            ),
        )

    def _scrub(self, message: str) -> str:
        return redact_text(message, self._secrets)

    # -- body handling --------------------------------------------------------------

    async def _capped_chunks(
        self, response: httpx.Response, cap: int, hops: int
    ) -> AsyncIterator[bytes]:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise self._size_denial(cap, int(declared), hops)
        received = 0
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            if received > cap:
                raise self._size_denial(cap, received, hops)
            yield chunk

    def _size_denial(self, cap: int, actual: int, hops: int) -> DoigetError:
        return denied(
            ErrorCode.CAPABILITY_DENIED,
            f"{self.source}: the response is larger than the {cap}-byte cap "
            f"(at least {actual} bytes); nothing was kept.",
            DenialReason.SIZE_CAP_EXCEEDED,
            source=self.source,
            cap=cap,
            actual=actual,
            hop_index=hops,
        )

    async def _save_pdf(
        self, response: httpx.Response, hops: int, cap: int, dest_dir: Path
    ) -> DownloadedPdf:
        chunks = self._capped_chunks(response, cap, hops)
        head = bytearray()
        async for chunk in chunks:
            head.extend(chunk)
            if len(head) >= PDF_MAGIC_WINDOW:
                break
        if PDF_MAGIC not in bytes(head[:PDF_MAGIC_WINDOW]):
            content_type = response.headers.get("content-type", "none")
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.source}: {redact_url(str(response.url))} is not a PDF (declared "
                f"{content_type}, body does not start with %PDF-); nothing was kept.",
                DenialReason.CONTENT_TYPE_MISMATCH,
                source=self.source,
                attempted=content_type,
                expected=("application/pdf",),
                hop_index=hops,
            )
        try:
            dest_dir.mkdir(parents=True, exist_ok=True)
            fd, name = _temp_file(dest_dir)
        except OSError as exc:
            raise write_error(ErrorCode.STORE_ERROR, "save a download in", dest_dir, exc) from exc
        digest = hashlib.sha256()
        path = Path(name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(head)
                digest.update(head)
                size = len(head)
                async for chunk in chunks:
                    handle.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException as exc:
            with suppress(FileNotFoundError):
                path.unlink()
            if isinstance(exc, OSError):
                raise write_error(ErrorCode.STORE_ERROR, "save the download to", path, exc) from exc
            raise
        return DownloadedPdf(path, size, digest.hexdigest(), str(response.url))


# The only request headers a redirect to another origin carries: a credential header
# (Authorization, X-ELS-APIKey, x-api-key ...) never follows the request elsewhere.
_PORTABLE_HEADERS: Final = frozenset({"accept", "accept-language"})


def _headers_for_hop(
    headers: Mapping[str, str] | None, same_origin: bool
) -> Mapping[str, str] | None:
    if headers is None or same_origin:
        return headers
    return {name: value for name, value in headers.items() if name.lower() in _PORTABLE_HEADERS}


def _time_for(wait: float) -> bool:
    """Whether the call's deadline leaves room to wait ``wait`` s and try again."""
    left = time_left()
    return left is None or left > wait


def _temp_file(directory: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".doiget-{os.getpid()}-", suffix=".part", dir=directory)


def _backoff_seconds(headers: httpx.Headers) -> float | None:
    """The seconds an upstream's ``Backoff`` header asks for (Zotero sends it when
    loaded), or None when absent or unreadable."""
    value = headers.get("backoff", "").strip()
    return float(value) if value.isdigit() and int(value) > 0 else None


def _retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Retry-After as seconds (delta or HTTP date), or None when absent or unreadable."""
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def user_agent(email_address: str | None) -> str:
    """``doiget/<version>``, with ``(mailto:...)`` when a contact address is configured."""
    product = f"doiget/{__version__}"
    return f"{product} (mailto:{email_address})" if email_address else product
