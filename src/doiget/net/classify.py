"""What a failed request's exception means: the one place that decides, for every
httpx, httpcore and ssl error, whether a second try can succeed.

Only what may pass on a second try is retried: a connection dropped or reset, a
response cut short. A request that ran out of time and a connection that cannot be
made at all (see :mod:`doiget.net.offline`) are final, each with its own answer.
Everything that would fail the same way again is final too, with a plain reason:
a URL that cannot be requested, a TLS certificate that does not verify (or names
another host), a TLS handshake the two sides cannot agree on, a malformed
response, a body whose Content-Encoding does not decode, a request the HTTP layer
refuses to send.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import httpcore
import httpx

from doiget.net.offline import Offline, offline_cause


class Fate(StrEnum):
    """What to do after a failed attempt."""

    RETRY = "retry"  # may pass on a second try
    TIMEOUT = "timeout"  # ran out of time: final, FETCH_TIMEOUT
    OFFLINE = "offline"  # no connection can be made: final
    PERMANENT = "permanent"  # fails the same way every time: final


class Permanent(StrEnum):
    """Why a failure will not pass on a second try (the ``transport`` detail)."""

    UNUSABLE_URL = "unusable_url"
    TLS_CERTIFICATE = "tls_certificate"
    TLS_HOSTNAME = "tls_hostname"
    TLS_HANDSHAKE = "tls_handshake"
    MALFORMED_RESPONSE = "malformed_response"
    UNDECODABLE_BODY = "undecodable_body"
    REFUSED_REQUEST = "refused_request"
    TOO_MANY_REDIRECTS = "too_many_redirects"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The fate of one failure; for a final one, why (``offline`` / ``permanent``)
    and a short phrase that says what happened (``what``)."""

    fate: Fate
    what: str
    offline: Offline | None = None
    permanent: Permanent | None = None


# OpenSSL's code for a certificate valid for other names than the one asked for.
_HOSTNAME_MISMATCH: Final = 62
# TLS failures that mean the connection dropped during the handshake, not a refusal.
_DROPPED_TLS: Final = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)
# How h11/httpcore say that a response ended early (the peer closed the connection);
# any other remote protocol error is a response that is not well-formed HTTP.
_ENDED_EARLY: Final = ("peer closed connection", "unexpectedly closed", "server disconnected")
# How httpx says that a redirect's Location is not a URL.
_BAD_LOCATION: Final = "invalid url in location header"


def classify(exc: BaseException) -> Verdict:
    """The verdict on ``exc``, an exception raised while sending a request or reading
    its answer (anything not recognised is a dropped connection: retried)."""
    name = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException | httpcore.TimeoutException | TimeoutError):
        return Verdict(Fate.TIMEOUT, "ran out of time")
    offline = offline_cause(exc)
    if offline is not None:
        return Verdict(Fate.OFFLINE, "could not connect", offline=offline)
    tls = _tls_cause(exc)
    if tls is not None:
        return tls
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol | httpcore.UnsupportedProtocol):
        return _permanent(Permanent.UNUSABLE_URL, f"is not a URL that can be requested ({exc})")
    if isinstance(exc, httpx.DecodingError):
        return _permanent(
            Permanent.UNDECODABLE_BODY, "answered with a body its Content-Encoding does not decode"
        )
    if isinstance(exc, httpx.TooManyRedirects):
        return _permanent(Permanent.TOO_MANY_REDIRECTS, "redirected too many times")
    if isinstance(exc, httpx.LocalProtocolError | httpcore.LocalProtocolError | httpx.ProxyError):
        return _permanent(Permanent.REFUSED_REQUEST, f"could not be sent as HTTP ({exc})")
    if isinstance(exc, httpx.RemoteProtocolError | httpcore.RemoteProtocolError):
        if _BAD_LOCATION in str(exc).lower():
            return _permanent(Permanent.UNUSABLE_URL, f"redirects to an unusable URL ({exc})")
        if any(phrase in str(exc).lower() for phrase in _ENDED_EARLY):
            return Verdict(Fate.RETRY, f"failed ({name}: the answer was cut short)")
        return _permanent(
            Permanent.MALFORMED_RESPONSE, f"answered with a malformed HTTP response ({exc})"
        )
    return Verdict(Fate.RETRY, f"failed ({name})")


def _permanent(reason: Permanent, what: str) -> Verdict:
    return Verdict(Fate.PERMANENT, what, permanent=reason)


def _tls_cause(exc: BaseException) -> Verdict | None:
    """The verdict on a TLS failure behind ``exc``, if one is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            detail = seen.verify_message or getattr(seen, "reason", None) or "unverified"
            if seen.verify_code == _HOSTNAME_MISMATCH:
                return _permanent(
                    Permanent.TLS_HOSTNAME,
                    f"presented a TLS certificate for another host name ({detail})",
                )
            return _permanent(
                Permanent.TLS_CERTIFICATE,
                f"presented a TLS certificate that does not verify ({detail})",
            )
        if isinstance(seen, ssl.SSLError):
            connecting = isinstance(exc, httpx.ConnectError | httpcore.ConnectError)
            if isinstance(seen, _DROPPED_TLS) or not connecting:
                # Dropped during the handshake, or a TLS stream broken mid-answer.
                return Verdict(Fate.RETRY, f"failed ({type(seen).__name__})")
            detail = getattr(seen, "reason", None) or type(seen).__name__
            return _permanent(
                Permanent.TLS_HANDSHAKE, f"could not agree on a TLS connection ({detail})"
            )
        seen = seen.__cause__ or seen.__context__
    return None
