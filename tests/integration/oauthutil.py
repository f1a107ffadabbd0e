"""An OpenID provider impersonated on the replay upstream: its discovery document and
key set, and access tokens signed with keys the test mints (cryptography, PyJWT)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from replay import ReplayUpstream

HOST = "sso.lab.example"
ISSUER = f"https://{HOST}/realms/lab"
DISCOVERY = "/realms/lab/.well-known/openid-configuration"
KEYS_PATH = "/realms/lab/protocol/openid-connect/certs"
RESOURCE = "http://127.0.0.1:8765/mcp"


@dataclass
class SigningKey:
    kid: str
    private: Any
    alg: str = "RS256"

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        entry: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**entry, "kid": self.kid, "use": "sig", "alg": self.alg}

    def public_pem(self) -> bytes:
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, ec.generate_private_key(ec.SECP256R1()), "ES256")


def claims(**changes: Any) -> dict[str, Any]:
    """The claims of a valid read-and-write token for ``alice``, with ``changes``
    (a value of None drops the claim)."""
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "iat": now,
        "nbf": now,
        "exp": now + 300,
        "azp": "claude-connector",
        "scope": "openid doiget.read doiget.write",
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned(header: dict[str, Any], payload: dict[str, Any], signature: bytes = b"") -> str:
    """A JWT assembled by hand (for algorithms no library signs with)."""
    return ".".join(
        (
            _b64(json.dumps(header).encode()),
            _b64(json.dumps(payload).encode()),
            _b64(signature),
        )
    )


def hs256_with(secret: bytes, header: dict[str, Any], payload: dict[str, Any]) -> str:
    """A token MACed with ``secret`` under HS256 (the public-key-as-secret attack)."""
    signing_input = unsigned(header, payload).rsplit(".", 1)[0]
    mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


@dataclass
class Provider:
    """The impersonated provider: what it publishes, and tokens signed by its keys."""

    upstream: ReplayUpstream
    keys: list[SigningKey] = field(default_factory=lambda: [rsa_key("k1")])

    def publish(self, *, issuer: str = ISSUER, key_set: Any = None) -> None:
        """Serve the discovery document (naming ``issuer``) and the key set."""
        self.upstream.json(
            HOST,
            DISCOVERY,
            {
                "issuer": issuer,
                "jwks_uri": f"https://{HOST}{KEYS_PATH}",
                "authorization_endpoint": f"{ISSUER}/protocol/openid-connect/auth",
                "token_endpoint": f"{ISSUER}/protocol/openid-connect/token",
            },
        )
        published = (
            key_set if key_set is not None else {"keys": [k.public_jwk() for k in self.keys]}
        )
        self.upstream.json(HOST, KEYS_PATH, published)

    def token(
        self, key: SigningKey | None = None, headers: dict[str, Any] | None = None, **changes: Any
    ) -> str:
        signer = key or self.keys[0]
        return jwt.encode(
            claims(**changes),
            signer.private,
            algorithm=signer.alg,
            headers={"kid": signer.kid, **(headers or {})},
        )

    def key_fetches(self) -> int:
        return len([r for r in self.upstream.requests_to(HOST) if r.path == KEYS_PATH])
