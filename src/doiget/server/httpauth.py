"""Who may call the HTTP server: static bearer tokens, OAuth 2.1 access tokens of the
configured issuer, or both; and what OAuth adds around ``/mcp`` (the Protected
Resource Metadata routes, 503 while the identity provider cannot be reached)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, cors_middleware
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from doiget.errors import DoigetError, ErrorCode
from doiget.oauthkeys import RETRY_GAP
from doiget.runtime import Runtime
from doiget.server.oauth.scopes import ToolScopes
from doiget.server.oauth.verifier import AnyOf, OAuthVerifier
from doiget.server.tokens import StaticTokens, read_token_file

# RFC 9728 §3: the metadata's well-known path (a client may also ask with the resource path).
METADATA_PATH = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class Authentication:
    """The verifier of every accepted token (None: no authentication, loopback only)
    and, when OAuth is on, its verifier."""

    verifier: TokenVerifier | None
    oauth: OAuthVerifier | None = None

    def describe(self) -> str:
        """What the start-up line says about authentication."""
        if self.verifier is None:
            return "authentication OFF (loopback only)"
        if self.oauth is None:
            return "bearer tokens"
        settings = self.oauth.settings
        static = " and static bearer tokens" if self.verifier is not self.oauth else ""
        return (
            f"OAuth 2.1 access tokens of {settings.issuer} for {settings.resource_url}{static};"
            f" scopes {settings.read_scope} (read tools), {settings.write_scope} (write tools)"
        )

    @property
    def metadata_url(self) -> AnyHttpUrl | None:
        """Where the Protected Resource Metadata is (None without OAuth)."""
        if self.oauth is None:
            return None
        return build_resource_metadata_url(AnyHttpUrl(self.oauth.settings.resource_url))

    def tool_scopes(self, read_only: frozenset[str]) -> ToolScopes | None:
        """The scope rules of the tools (None without OAuth)."""
        if self.oauth is None:
            return None
        settings = self.oauth.settings
        return ToolScopes(
            settings.read_scope, settings.write_scope, read_only, str(self.metadata_url)
        )

    def routes(self) -> list[Route]:
        """The Protected Resource Metadata (RFC 9728), at the well-known path with and
        without the resource's path. The issuer and resource are given exactly as
        configured: clients compare them as strings with what the issuer publishes."""
        if self.oauth is None:
            return []
        settings = self.oauth.settings
        metadata = ProtectedResourceMetadata(
            resource=AnyHttpUrl(settings.resource_url),
            authorization_servers=[AnyHttpUrl(settings.issuer)],
            scopes_supported=[settings.read_scope, settings.write_scope],
            resource_name="doiget",
        )
        document = {
            **metadata.model_dump(mode="json", exclude_none=True),
            "resource": settings.resource_url,
            "authorization_servers": [settings.issuer],
        }

        async def metadata_page(request: Request) -> Response:
            return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

        endpoint = cors_middleware(metadata_page, ["GET", "OPTIONS"])
        paths = dict.fromkeys((urlsplit(str(self.metadata_url)).path, METADATA_PATH))
        return [Route(path, endpoint, methods=["GET", "OPTIONS"]) for path in paths]


def authentication(runtime: Runtime) -> Authentication:
    """The configured authentication. A server on a non-loopback address without
    tokens or OAuth, and --insecure-no-auth with either, refuse the start."""
    settings = runtime.settings.http
    tokens = settings.token_values()
    if settings.tokens_file is not None:
        tokens += read_token_file(settings.tokens_file)
    if settings.insecure_no_auth:
        if not settings.loopback:
            raise DoigetError(
                ErrorCode.INVALID_CONFIG,
                f"--insecure-no-auth is only allowed on a loopback address, not {settings.host}; "
                "configure DOIGET_HTTP_TOKENS_FILE instead.",
            )
        if tokens or settings.oauth is not None:
            raise DoigetError(
                ErrorCode.INVALID_CONFIG,
                "--insecure-no-auth was given while tokens or DOIGET_HTTP_OAUTH_ISSUER are "
                "configured; drop one of them.",
            )
        return Authentication(None)
    if settings.oauth is None:
        return Authentication(StaticTokens(tokens))
    oauth = OAuthVerifier(settings.oauth, runtime.network())
    if not tokens:
        return Authentication(oauth, oauth)
    scopes = (settings.oauth.read_scope, settings.oauth.write_scope)
    return Authentication(AnyOf([StaticTokens(tokens, scopes), oauth]), oauth)


def provider_down(conn: HTTPConnection, exc: Exception) -> Response:
    """503 for a token that cannot be checked now (the provider is out of reach)."""
    return JSONResponse(
        {"error": "temporarily_unavailable", "error_description": str(exc)},
        status_code=503,
        headers={"Retry-After": f"{RETRY_GAP:.0f}"},
    )
