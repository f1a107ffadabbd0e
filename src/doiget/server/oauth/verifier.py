"""The token verifiers the HTTP server's bearer authentication asks: OAuth access
tokens (JWTs, and opaque ones through introspection when configured), and both OAuth
and static tokens at once."""

from __future__ import annotations

from collections.abc import Sequence

from mcp.server.auth.provider import AccessToken, TokenVerifier

from doiget.net.network import Network
from doiget.oauthconfig import OAuthSettings
from doiget.oauthkeys import ProviderKeys
from doiget.server.oauth.accesstoken import Caller, check_jwt, looks_like_jwt
from doiget.server.oauth.introspection import Introspection


def caller_name(caller: Caller) -> str:
    """What a caller goes by in logs, budgets and ownership: its subject at its issuer
    (one person's sessions are theirs whichever of their tokens they use)."""
    return f"{caller.subject}@{caller.issuer}"


class OAuthVerifier:
    """Access tokens of the configured issuer, for this server's resource URL."""

    def __init__(self, settings: OAuthSettings, network: Network) -> None:
        self.settings = settings
        self.keys = ProviderKeys(settings.issuer, network)
        url = settings.introspection_url
        self._introspection = Introspection(settings, url, network) if url else None

    async def verify_token(self, token: str) -> AccessToken | None:
        """The caller of a valid token; None for an invalid one. Raises
        :class:`~doiget.oauthkeys.ProviderUnavailable` when the provider
        is needed and cannot be reached."""
        settings = self.settings
        if looks_like_jwt(token):
            caller = await check_jwt(token, settings.issuer, settings.resource_url, self.keys.key)
        elif self._introspection is not None:
            caller = await self._introspection.caller(token)
        else:
            caller = None
        if caller is None:
            return None
        name = caller_name(caller)
        return AccessToken(
            token=name,
            client_id=name,
            scopes=list(caller.scopes),
            expires_at=caller.expires_at,
            resource=settings.resource_url,
            subject=caller.subject,
            claims={"iss": caller.issuer, "azp": caller.client_id},
        )


class AnyOf:
    """The first verifier that knows a token decides (static tokens are checked first:
    they need no provider)."""

    def __init__(self, verifiers: Sequence[TokenVerifier]) -> None:
        self.verifiers = tuple(verifiers)

    async def verify_token(self, token: str) -> AccessToken | None:
        for verifier in self.verifiers:
            found = await verifier.verify_token(token)
            if found is not None:
                return found
        return None
