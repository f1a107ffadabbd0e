"""Opaque access tokens checked at the authorization server's introspection endpoint
(RFC 7662), as the client DOIGET_HTTP_OAUTH_CLIENT_ID; answers kept for at most
:data:`CACHE_SECONDS` (and never past the token's expiry), by the token's digest."""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any, Final
from urllib.parse import quote, urlencode

from cachetools import TTLCache

from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.oauthconfig import OAuthSettings
from doiget.oauthkeys import ProviderUnavailable
from doiget.server.oauth.accesstoken import SKEW, Caller, caller_of

CACHE_SECONDS: Final = 60.0
CACHE_ENTRIES: Final = 10_000


class Introspection:
    """Asks the authorization server whether an opaque token is active, and for whom."""

    def __init__(self, settings: OAuthSettings, url: str, network: Network) -> None:
        self._settings = settings
        self._url = url
        self._network = network
        self._answers: TTLCache[bytes, Caller | None] = TTLCache(CACHE_ENTRIES, CACHE_SECONDS)

    async def caller(self, token: str) -> Caller | None:
        """The caller of an active token issued for this server; None otherwise."""
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        if digest in self._answers:
            known = self._answers[digest]
            return known if known is None or _unexpired(known) else None
        found = await self._ask(token)
        self._answers[digest] = found
        return found

    async def _ask(self, token: str) -> Caller | None:
        settings = self._settings
        client = self._network.client("oauth-introspection", endpoint=self._url)
        secret = settings.client_secret.reveal() if settings.client_secret else ""
        pair = f"{quote(settings.client_id or '', safe='')}:{quote(secret, safe='')}"
        headers = {
            "Authorization": "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii"),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        body = urlencode({"token": token, "token_type_hint": "access_token"}).encode("ascii")
        try:
            answer = client.json_of(await client.post(self._url, body, headers=headers))
        except DoigetError as exc:
            raise ProviderUnavailable(f"introspection: {exc.code.value}") from exc
        if not isinstance(answer, dict) or answer.get("active") is not True:
            return None
        if answer.get("iss", settings.issuer) != settings.issuer:
            return None
        audience = answer.get("aud")
        named = audience if isinstance(audience, list) else [audience]
        wanted = settings.resource_url.rstrip("/")
        if not any(isinstance(item, str) and item.rstrip("/") == wanted for item in named):
            return None
        if not _started(answer.get("nbf")):
            return None
        found = caller_of(answer, settings.issuer)
        return found if found is not None and _unexpired(found) else None


def _started(not_before: Any) -> bool:
    """Whether a token's ``nbf`` (when it has one) is past, within :data:`SKEW` seconds."""
    if not isinstance(not_before, int | float) or isinstance(not_before, bool):
        return not_before is None
    return not_before <= time.time() + SKEW


def _unexpired(caller: Caller) -> bool:
    return caller.expires_at is None or caller.expires_at > time.time()
