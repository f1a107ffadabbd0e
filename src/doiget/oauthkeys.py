"""The authorization server's discovery document and signing keys, fetched through
doiget's network layer (https only, DOIGET_CA_BUNDLE applies) and cached.

Keys are fetched at first use and again after :data:`KEYS_TTL`; a token naming a key
id not at hand refreshes them at most once per :data:`REFRESH_GAP` (a flood of
made-up key ids costs the provider nothing). When the provider cannot be reached the
keys at hand keep working; with none at hand, :class:`ProviderUnavailable` (a 503),
never acceptance.
"""

from __future__ import annotations

import time
from typing import Any, Final

import anyio
import jwt
from starlette.authentication import AuthenticationError

from doiget.errors import DoigetError
from doiget.net.client import SourceClient
from doiget.net.network import Network

# The discovery document and the key set are small; anything larger is not one.
MAX_DOCUMENT_BYTES: Final = 256 * 1024
MAX_KEYS: Final = 64
# Public keys only: a shared secret ("oct") published in a key set is no signing key.
PUBLIC_KEY_TYPES: Final = frozenset({"RSA", "EC", "OKP"})
KEYS_TTL: Final = 3600.0
REFRESH_GAP: Final = 30.0
# After a failed fetch, requests within this many seconds fail at once.
RETRY_GAP: Final = 5.0
OIDC_DISCOVERY: Final = "/.well-known/openid-configuration"
OAUTH_DISCOVERY: Final = "/.well-known/oauth-authorization-server"


class ProviderUnavailable(AuthenticationError):
    """The identity provider cannot say whether a token is valid (answered with 503)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the identity provider cannot be reached ({reason}); no new access token can "
            f"be checked now. Retry in {RETRY_GAP:.0f} s; if it lasts, tell the operator."
        )


def _https(url: Any, what: str) -> str:
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ProviderUnavailable(f"its {what} is not an https URL")
    return url


class ProviderKeys:
    """The discovery document and key set of one issuer."""

    def __init__(self, issuer: str, network: Network) -> None:
        self.issuer = issuer
        self._network = network
        self._metadata: dict[str, Any] | None = None
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched = -KEYS_TTL  # monotonic time of the last successful key fetch
        self._unknown_at = -REFRESH_GAP  # ... of the last refresh for an unknown key id
        self._failed_at: float | None = None
        self._lock = anyio.Lock()

    @property
    def ready(self) -> bool:
        """Whether signing keys are at hand (fetched and not stale)."""
        return bool(self._keys) and time.monotonic() - self._fetched < KEYS_TTL

    async def metadata(self) -> dict[str, Any]:
        """The authorization server's metadata (its issuer checked), cached."""
        if self._metadata is None:
            self._metadata = await self._discover()
        return self._metadata

    async def key(self, kid: str | None) -> jwt.PyJWK | None:
        """The signing key ``kid`` (the only key when a token names none), or None when
        the provider does not publish it."""
        async with self._lock:
            now = time.monotonic()
            found = self._pick(kid)
            unknown = found is None and now - self._unknown_at >= REFRESH_GAP
            if unknown and self._keys:
                self._unknown_at = now
            if unknown or now - self._fetched >= KEYS_TTL:
                await self._refresh(now)
                found = self._pick(kid)
            return found

    async def check(self) -> bool:
        """Fetch the keys unless they are at hand; whether they are then."""
        return await self.problem() is None

    async def problem(self) -> str | None:
        """Fetch the keys unless they are at hand; None when they are then, else why not."""
        async with self._lock:
            if not self.ready:
                try:
                    await self._refresh(time.monotonic())
                except ProviderUnavailable as exc:
                    return str(exc)
        return None if self.ready else "its signing keys could not be fetched"

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, now: float) -> None:
        """Fetch the key set; on failure keep the keys at hand, or, with none, refuse."""
        if self._failed_at is not None and now - self._failed_at < RETRY_GAP and not self._keys:
            raise ProviderUnavailable("it failed moments ago")
        try:
            metadata = await self.metadata()
            url = _https(metadata.get("jwks_uri"), "jwks_uri")
            self._keys = _key_set(await self._get(url, "oauth-keys"))
            self._fetched, self._failed_at = now, None
        except ProviderUnavailable:
            self._failed_at = now
            if not self._keys:
                raise

    async def _discover(self) -> dict[str, Any]:
        """RFC 8414 / OpenID Connect discovery: the OpenID document, else the OAuth one."""
        base = self.issuer.rstrip("/")
        scheme, _, rest = base.partition("://")
        host, _, path = rest.partition("/")
        tried: list[str] = []
        for url in (
            base + OIDC_DISCOVERY,
            f"{scheme}://{host}{OAUTH_DISCOVERY}" + (f"/{path}" if path else ""),
        ):
            try:
                document = await self._get(url, "oauth-issuer")
            except ProviderUnavailable as exc:
                tried.append(str(exc))
                continue
            if document.get("issuer") != self.issuer:
                # RFC 8414 §3.3: a document naming another issuer is not this one's.
                raise ProviderUnavailable(
                    "its discovery document names another issuer than DOIGET_HTTP_OAUTH_ISSUER"
                )
            return document
        raise ProviderUnavailable("no discovery document could be read")

    async def _get(self, url: str, source: str) -> dict[str, Any]:
        client: SourceClient = self._network.client(source, endpoint=url)
        try:
            fetched = await client.get(
                url, headers={"Accept": "application/json"}, max_bytes=MAX_DOCUMENT_BYTES
            )
            document = client.json_of(fetched)
        except DoigetError as exc:
            raise ProviderUnavailable(f"{exc.code.value} for {url}") from exc
        if fetched.status != 200 or not isinstance(document, dict):
            raise ProviderUnavailable(f"{url} did not answer with a JSON object")
        return document


def _key_set(document: dict[str, Any]) -> dict[str, jwt.PyJWK]:
    """The signature keys of a JWKS document by key id (unusable keys skipped)."""
    entries = document.get("keys")
    if not isinstance(entries, list) or len(entries) > MAX_KEYS:
        raise ProviderUnavailable(f"its key set is not a list of at most {MAX_KEYS} keys")
    keys: dict[str, jwt.PyJWK] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        if entry.get("kty") not in PUBLIC_KEY_TYPES:
            continue
        try:
            key = jwt.PyJWK(entry)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
            continue
        keys[str(entry.get("kid", f"#{index}"))] = key
    if not keys:
        raise ProviderUnavailable("its key set holds no usable signing key")
    return keys


async def provider_health(issuer: str, network: Network) -> dict[str, Any]:
    """What ``doiget health`` says of the identity provider: its issuer and whether its
    signing keys can be fetched now (or why not)."""
    problem = await ProviderKeys(issuer, network).problem()
    if problem is None:
        return {"issuer": issuer, "keys_at_hand": True}
    return {"issuer": issuer, "keys_at_hand": False, "reason": problem}
