"""Every transport exception has one verdict: retried only when a second try can pass.

The loopback tests (tests/integration/test_net_transport_errors.py) produce the
common failures for real; these are the shapes a loopback server cannot easily make.
"""

from __future__ import annotations

import socket
import ssl

import httpcore
import httpx
import pytest

from doiget.net.classify import Fate, Permanent, classify


def _caused(outer: Exception, cause: BaseException) -> Exception:
    outer.__cause__ = cause
    return outer


def _cert_error(code: int, message: str) -> ssl.SSLCertVerificationError:
    error = ssl.SSLCertVerificationError(1, message)
    error.verify_code = code
    error.verify_message = message
    return error


@pytest.mark.parametrize(
    ("exc", "fate", "permanent"),
    [
        (httpx.ConnectTimeout("x"), Fate.TIMEOUT, None),
        (httpx.ReadTimeout("x"), Fate.TIMEOUT, None),
        (httpx.PoolTimeout("x"), Fate.TIMEOUT, None),
        (_caused(httpx.ConnectError("x"), socket.gaierror(-2, "no name")), Fate.OFFLINE, None),
        (_caused(httpx.ConnectError("x"), ConnectionRefusedError()), Fate.OFFLINE, None),
        (_caused(httpx.ConnectError("x"), ConnectionResetError()), Fate.RETRY, None),
        (httpx.ReadError("x"), Fate.RETRY, None),
        (httpx.WriteError("x"), Fate.RETRY, None),
        (
            httpx.RemoteProtocolError("Server disconnected without sending a response."),
            Fate.RETRY,
            None,
        ),
        (
            httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body"
            ),
            Fate.RETRY,
            None,
        ),
        (
            _caused(httpx.ConnectError("x"), ssl.SSLEOFError(8, "EOF occurred in violation")),
            Fate.RETRY,
            None,
        ),
        (_caused(httpx.ReadError("x"), ssl.SSLError(1, "bad record mac")), Fate.RETRY, None),
        (
            _caused(httpx.ConnectError("x"), _cert_error(62, "Hostname mismatch")),
            Fate.PERMANENT,
            Permanent.TLS_HOSTNAME,
        ),
        (
            _caused(httpx.ConnectError("x"), _cert_error(10, "certificate has expired")),
            Fate.PERMANENT,
            Permanent.TLS_CERTIFICATE,
        ),
        (
            _caused(httpcore.ConnectError("x"), ssl.SSLError(1, "wrong version number")),
            Fate.PERMANENT,
            Permanent.TLS_HANDSHAKE,
        ),
        (httpx.UnsupportedProtocol("no scheme"), Fate.PERMANENT, Permanent.UNUSABLE_URL),
        (httpx.InvalidURL("bad port"), Fate.PERMANENT, Permanent.UNUSABLE_URL),
        (
            httpx.RemoteProtocolError("Invalid URL in location header: bad."),
            Fate.PERMANENT,
            Permanent.UNUSABLE_URL,
        ),
        (
            httpx.RemoteProtocolError("illegal status line"),
            Fate.PERMANENT,
            Permanent.MALFORMED_RESPONSE,
        ),
        (httpx.DecodingError("bad gzip"), Fate.PERMANENT, Permanent.UNDECODABLE_BODY),
        (httpx.TooManyRedirects("loop"), Fate.PERMANENT, Permanent.TOO_MANY_REDIRECTS),
        (
            httpx.LocalProtocolError("Illegal header value"),
            Fate.PERMANENT,
            Permanent.REFUSED_REQUEST,
        ),
        (httpx.ProxyError("x"), Fate.PERMANENT, Permanent.REFUSED_REQUEST),
    ],
)
def test_each_transport_failure_has_one_verdict(
    exc: Exception, fate: Fate, permanent: Permanent | None
) -> None:
    verdict = classify(exc)
    assert verdict.fate is fate
    assert verdict.permanent is permanent
    assert verdict.what
