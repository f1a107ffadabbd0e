"""serve --http signed into through a real OpenID provider: oidc-provider (the
certified node server) on loopback TLS, and the MCP SDK's own OAuth clients.

A person completes the authorization-code flow with PKCE (after dynamic client
registration) and calls tools; a read-only account is refused a fetch with an error
naming the write scope; a service account gets a token with client credentials.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import pytest
import trustme
from httputil import http_server
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from redisutil import free_port

from npmpackage import Unavailable
from oidcprovider_runner import modules_folder, running

READ, WRITE = "doiget.read", "doiget.write"
REDIRECT = "http://localhost:3030/callback"
SERVICE_SECRET = "service-secret-4c1f0e9d8b7a6"


@pytest.fixture(scope="module")
def oidc_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return modules_folder(tmp_path_factory.mktemp("oidc-provider"))
    except Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"oidc-provider is required in CI: {exc}")
        pytest.skip(f"oidc-provider cannot be installed here: {exc}")


@dataclass
class World:
    issuer: str
    resource: str
    port: int
    ca: ssl.SSLContext
    env: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def world(oidc_modules: Path, tmp_path: Path, doiget_env: dict[str, str]) -> Iterator[World]:
    ca = trustme.CA()
    cert = ca.issue_cert("localhost")
    ca_path, key_path, cert_path = tmp_path / "ca.pem", tmp_path / "tls.key", tmp_path / "tls.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    cert.private_key_pem.write_to_path(str(key_path))
    cert.cert_chain_pems[0].write_to_path(str(cert_path))
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    settings = {
        "modules": str(oidc_modules),
        "tls_key": str(key_path),
        "tls_cert": str(cert_path),
        "resource": resource,
        "scopes": [READ, WRITE],
        "accounts": {"alice": [READ, WRITE], "reader": [READ]},
        "service": {
            "client_id": "indexer",
            "client_secret": SERVICE_SECRET,
            "scope": f"{READ} {WRITE}",
        },
    }
    context = ssl.create_default_context(cafile=str(ca_path))
    with running(settings, tmp_path) as issuer:
        env = {
            **doiget_env,
            "DOIGET_HTTP_OAUTH_ISSUER": issuer,
            "DOIGET_HTTP_RESOURCE_URL": resource,
            "DOIGET_CA_BUNDLE": str(ca_path),
        }
        yield World(issuer, resource, port, context, env)


class Memory:
    """Token storage of one client."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Follows the authorization redirects as a browser would, signed in as ``account``,
    and hands the code back to the SDK's client."""

    def __init__(self, account: str, ca: ssl.SSLContext) -> None:
        self.account = account
        self.ca = ca
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        # Cookies by hand: the standard cookie jar does not keep cookies of "localhost".
        cookies: dict[str, str] = {}
        async with httpx2.AsyncClient(verify=self.ca, timeout=30) as browser:
            for _ in range(10):
                sent = "; ".join(f"{name}={value}" for name, value in cookies.items())
                headers = {"X-Test-Account": self.account, "Cookie": sent}
                response = await browser.get(url, headers=headers)
                for line in response.headers.get_list("set-cookie"):
                    name, _, value = line.split(";", 1)[0].partition("=")
                    cookies[name.strip()] = value
                assert response.is_redirect, f"{url}: {response.status_code} {response.text[:500]}"
                url = urljoin(url, response.headers["location"])
                if url.startswith(REDIRECT):
                    query = parse_qs(urlsplit(url).query)
                    assert "code" in query, url
                    self.result = AuthorizationCodeResult(
                        code=query["code"][0],
                        state=query.get("state", [None])[0],
                        iss=query.get("iss", [None])[0],
                    )
                    return
        raise AssertionError("the provider never redirected back")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


@asynccontextmanager
async def session(world: World, auth: httpx2.Auth) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(auth=auth, verify=world.ca, timeout=60) as client,
        streamable_http_client(world.resource, http_client=client) as (read, write),
        ClientSession(read, write) as opened,
    ):
        await opened.initialize()
        yield opened


def person(world: World, account: str) -> OAuthClientProvider:
    browser = Browser(account, world.ca)
    return OAuthClientProvider(
        world.resource,
        OAuthClientMetadata(
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            client_name="doiget tests",
            application_type="native",
        ),
        Memory(),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )


def text_of(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def test_a_person_signs_in_with_pkce_and_calls_tools(world: World, tmp_path: Path) -> None:
    with http_server(world.env, tmp_path, port=world.port) as server:
        async with session(world, person(world, "alice")) as alice:
            tools = await alice.list_tools()
            assert "doiget_fetch_paper" in {tool.name for tool in tools.tools}
            profile = await alice.call_tool("doiget_capability_profile", {})
            assert not profile.is_error
        server.stop()
    assert f"OAuth 2.1 access tokens of {world.issuer}" in server.stderr
    assert '"token":"alice@' in server.stderr


async def test_a_read_only_account_is_refused_a_fetch_naming_the_write_scope(
    world: World, tmp_path: Path
) -> None:
    with http_server(world.env, tmp_path, port=world.port) as server:
        async with session(world, person(world, "reader")) as reader:
            profile = await reader.call_tool("doiget_capability_profile", {})
            assert not profile.is_error
            with pytest.raises(Exception) as refused:
                await reader.call_tool("doiget_fetch_paper", {"ref": "10.1234/abc"})
            assert WRITE in str(refused.value)
        server.stop()
    assert "doiget_fetch_paper" in server.stderr  # the refused call is logged ...
    assert '"status":403' in server.stderr  # ... as refused


async def test_a_service_account_uses_client_credentials(world: World, tmp_path: Path) -> None:
    service = ClientCredentialsOAuthProvider(
        world.resource, Memory(), "indexer", SERVICE_SECRET, scope=READ, issuer=world.issuer
    )
    with http_server(world.env, tmp_path, port=world.port) as server:
        async with session(world, service) as indexer:
            result = await indexer.call_tool("doiget_capability_profile", {})
            assert not result.is_error
        server.stop()
    assert f'"token":"indexer@{world.issuer}"' in server.stderr
