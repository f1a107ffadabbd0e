"""A JWT access token checked: signature by one of the issuer's keys with an
allow-listed algorithm, ``iss`` exact, ``aud`` naming this server, ``exp`` / ``nbf``
within :data:`SKEW` seconds, and a subject."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import jwt

# Asymmetric signatures only: never "none", never an HMAC (whose "secret" would be the
# provider's public key, known to everybody).
ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
SKEW: Final = 60
MAX_TOKEN_CHARS: Final = 16 * 1024
MAX_SUBJECT_CHARS: Final = 255
_JWT_SHAPE: Final = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

KeyLookup = Callable[[str | None], Awaitable[jwt.PyJWK | None]]


@dataclass(frozen=True)
class Caller:
    """Who an access token speaks for, and what it allows."""

    issuer: str
    subject: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: int | None


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has the three-part shape of a signed JWT."""
    return len(token) <= MAX_TOKEN_CHARS and _JWT_SHAPE.fullmatch(token) is not None


def scopes_of(claims: dict[str, Any]) -> tuple[str, ...]:
    """The scopes a token grants: ``scope`` (space-separated, RFC 8693 / 9068) or ``scp``
    (a list, as some providers write it)."""
    scope = claims.get("scope")
    granted = scope.split() if isinstance(scope, str) else []
    listed = claims.get("scp")
    if isinstance(listed, list):
        granted += [item for item in listed if isinstance(item, str)]
    elif isinstance(listed, str):
        granted += listed.split()
    return tuple(dict.fromkeys(granted))


def caller_of(claims: dict[str, Any], issuer: str) -> Caller | None:
    """The caller a token's checked claims name; None without a usable subject."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        return None
    client = claims.get("client_id", claims.get("azp", ""))
    expires = claims.get("exp")
    return Caller(
        issuer=issuer,
        subject=subject,
        client_id=client if isinstance(client, str) else "",
        scopes=scopes_of(claims),
        expires_at=int(expires) if isinstance(expires, int | float) else None,
    )


async def check_jwt(token: str, issuer: str, audience: str, key_for: KeyLookup) -> Caller | None:
    """The caller of a valid ``token``; None for any token that is not (a
    :class:`~doiget.oauthkeys.ProviderUnavailable` passes through)."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return None
    algorithm = header.get("alg")
    kid = header.get("kid")
    if algorithm not in ALGORITHMS or not isinstance(kid, str | None):
        return None
    key = await key_for(kid)
    if key is None:  # a key of another type than the algorithm's fails in decode
        return None
    try:
        claims = jwt.decode(
            token,
            key=key.key,
            algorithms=[algorithm],
            audience=[audience, audience.rstrip("/"), audience.rstrip("/") + "/"],
            issuer=issuer,
            leeway=SKEW,
            options={"require": ["exp", "iss", "aud", "sub"], "strict_aud": False},
        )
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    return caller_of(claims, issuer)
