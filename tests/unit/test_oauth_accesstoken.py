"""The access token check on its own: the algorithm allow-list holds even when the key
lookup hands it a key an HMAC could use (a symmetric key in a provider's key set, or a
lookup that someday lets one through): only asymmetric signatures are accepted."""

from __future__ import annotations

import base64
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from doiget.server.oauth.accesstoken import check_jwt

ISSUER = "https://sso.lab.example/realms/lab"
AUDIENCE = "https://doiget.lab.example/mcp"
SECRET = b"a-shared-secret-long-enough-for-every-hmac-of-the-jws-family-0123"


def _claims() -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now + 300, "nbf": now}


def _lookup(key: jwt.PyJWK):  # type: ignore[no-untyped-def]
    async def key_for(kid: str | None) -> jwt.PyJWK:
        return key

    return key_for


async def test_an_rsa_signature_by_the_looked_up_key_is_accepted() -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode(_claims(), private, algorithm="RS256", headers={"kid": "k1"})
    public = jwt.PyJWK.from_dict(
        {**jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key(), as_dict=True), "kid": "k1"}
    )
    caller = await check_jwt(token, ISSUER, AUDIENCE, _lookup(public))
    assert caller is not None and caller.subject == "alice"


@pytest.mark.parametrize("algorithm", ["HS256", "HS384", "HS512"])
async def test_an_hmac_is_refused_even_when_the_lookup_returns_a_symmetric_key(
    algorithm: str,
) -> None:
    token = jwt.encode(_claims(), SECRET, algorithm=algorithm, headers={"kid": "k1"})
    k = base64.urlsafe_b64encode(SECRET).rstrip(b"=").decode()
    symmetric = jwt.PyJWK.from_dict({"kty": "oct", "k": k, "kid": "k1", "alg": algorithm})
    assert await check_jwt(token, ISSUER, AUDIENCE, _lookup(symmetric)) is None
