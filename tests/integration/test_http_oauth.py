"""serve --http as an OAuth 2.1 resource server: every access token that is not the
configured issuer's, for this server, unexpired and properly signed is refused (401,
nothing served), a token without the scope a tool needs gets 403 naming it, and the
identity provider out of reach means 503, never acceptance.

The provider is impersonated on the loopback replay upstream (its discovery document
and key set); the server is the real ASGI application, run in process.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from oauthutil import (
    DISCOVERY,
    HOST,
    ISSUER,
    KEYS_PATH,
    RESOURCE,
    Provider,
    claims,
    ec_key,
    hs256_with,
    rsa_key,
    unsigned,
)
from starlette.testclient import TestClient

from doiget.runtime import load_runtime
from doiget.server.http import build_app

from replay import ReplayUpstream, Reply

MCP = "/mcp"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
}
STATIC = "static-team-token-7d1e0c9b8a"


@pytest.fixture
def provider(upstream: ReplayUpstream) -> Provider:
    idp = Provider(upstream)
    idp.publish()
    return idp


def serve(env: dict[str, str], **extra: str) -> TestClient:
    """The HTTP application with OAuth on for the impersonated provider."""
    settings = {
        **env,
        "DOIGET_HTTP_OAUTH_ISSUER": ISSUER,
        "DOIGET_HTTP_RESOURCE_URL": RESOURCE,
        **extra,
    }
    app, _ = build_app(load_runtime(settings, http=True))
    return TestClient(app, base_url="http://127.0.0.1:8765")


@pytest.fixture
def server(doiget_env: dict[str, str], provider: Provider) -> Iterator[TestClient]:
    with serve(doiget_env) as client:
        yield client


def initialize(client: TestClient, token: str) -> Any:
    return client.post(
        MCP, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {token}"}
    )


def session(client: TestClient, token: str) -> dict[str, str]:
    """The headers of a fresh, initialized session of ``token``."""
    opened = initialize(client, token)
    assert opened.status_code == 200, opened.text
    headers = {
        **HEADERS,
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "Mcp-Protocol-Version": "2025-06-18",
    }
    client.post(
        MCP, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    return headers


def call(client: TestClient, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    """tools/call of ``tool`` in a fresh session of ``token``."""
    headers = session(client, token)
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return client.post(MCP, json=message, headers=headers)


def assert_refused(response: Any, status: int = 401) -> None:
    assert response.status_code == status, response.text
    assert "mcp-session-id" not in response.headers
    if status == 401:
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert (
            'resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"'
            in challenge
        )


def test_a_valid_token_opens_a_session_and_calls_a_read_tool(
    server: TestClient, provider: Provider
) -> None:
    token = provider.token(scope="doiget.read")
    answer = call(server, token, "doiget_capability_profile", {})
    assert answer.status_code == 200
    assert '"isError":false' in answer.text.replace(" ", "")


def test_protected_resource_metadata_names_the_issuer_and_scopes(server: TestClient) -> None:
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        document = server.get(path).json()
        assert document["resource"] == RESOURCE
        assert document["authorization_servers"] == [ISSUER]
        assert document["scopes_supported"] == ["doiget.read", "doiget.write"]
    assert_refused(server.post(MCP, json=INITIALIZE, headers=HEADERS))


def _variants(provider: Provider) -> dict[str, str]:
    now = int(time.time())
    stranger = rsa_key("k1")  # the provider's key id, another key
    header = {"alg": "RS256", "kid": "k1", "typ": "JWT"}
    return {
        "expired": provider.token(exp=now - 120, iat=now - 600, nbf=now - 600),
        "expired beyond the skew only": provider.token(exp=now - 61, iat=now - 600, nbf=now - 600),
        "not yet valid": provider.token(nbf=now + 600),
        "issued in the future": provider.token(iat=now + 600, nbf=None),
        "no expiry": provider.token(exp=None),
        "another audience": provider.token(aud="https://other-service.example/api"),
        "audience missing": provider.token(aud=None),
        "audience of a client (an ID token)": provider.token(aud="claude-connector"),
        "another issuer": provider.token(iss="https://evil.example/realms/lab"),
        "the issuer with a trailing slash": provider.token(iss=ISSUER + "/"),
        "no subject": provider.token(sub=None),
        "signed by an unknown key": provider.token(key=rsa_key("k-unknown")),
        "signed by another key under a known kid": provider.token(key=stranger),
        "alg none": unsigned({"alg": "none", "kid": "k1"}, claims()),
        "alg None spelled otherwise": unsigned({"alg": "None", "kid": "k1"}, claims()),
        "HS256 with the public key as secret": hs256_with(
            provider.keys[0].public_pem(), {**header, "alg": "HS256"}, claims()
        ),
        "HS256 with the JWK n as secret": hs256_with(
            provider.keys[0].public_jwk()["n"].encode(), {**header, "alg": "HS256"}, claims()
        ),
        "signature stripped": provider.token().rsplit(".", 1)[0] + ".",
        "payload swapped": _swap_payload(provider.token(scope="doiget.read"), claims(sub="root")),
        "garbage": "not-a-token-at-all",
    }


def _swap_payload(token: str, payload: dict[str, Any]) -> str:
    header, _, signature = token.split(".")
    forged = unsigned({}, payload).split(".")[1]
    return f"{header}.{forged}.{signature}"


def test_every_forged_or_misdirected_token_is_refused_with_401(
    server: TestClient, provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    """Each variant alone: 401 with the resource metadata challenge, no session."""
    caplog.set_level(logging.INFO, logger="doiget.http")
    variants = _variants(provider)
    for name, token in variants.items():
        response = initialize(server, token)
        assert response.status_code == 401, f"{name}: {response.status_code}"
        assert_refused(response)
    # Nothing of any token reaches a log line.
    text = caplog.text
    for token in variants.values():
        for part in token.split("."):
            if len(part) > 16:
                assert part not in text


def test_tokens_within_the_skew_and_with_several_audiences_are_accepted(
    server: TestClient, provider: Provider
) -> None:
    now = int(time.time())
    for token in (
        provider.token(nbf=now + 30),
        provider.token(aud=["https://other-service.example/api", RESOURCE]),
        provider.token(aud=RESOURCE + "/"),
        provider.token(scope=None, scp=["doiget.read"]),
    ):
        assert initialize(server, token).status_code == 200


def test_an_ec_key_is_accepted_and_an_rsa_algorithm_on_it_is_not(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    idp = Provider(upstream, [ec_key("ec1")])
    idp.publish()
    with serve(doiget_env) as client:
        assert initialize(client, idp.token()).status_code == 200
        forged = unsigned({"alg": "RS256", "kid": "ec1"}, claims(), b"x" * 256)
        assert_refused(initialize(client, forged))


def test_a_key_rotated_out_stops_working_and_the_new_one_works(
    server: TestClient, provider: Provider
) -> None:
    old = provider.token()
    assert initialize(server, old).status_code == 200
    provider.keys = [rsa_key("k2")]
    provider.publish()
    assert initialize(server, provider.token()).status_code == 200  # unknown kid: refreshed
    assert_refused(initialize(server, old))


def test_unknown_key_ids_refresh_the_keys_at_most_once_in_a_while(
    server: TestClient, provider: Provider
) -> None:
    assert initialize(server, provider.token()).status_code == 200
    before = provider.key_fetches()
    for number in range(20):
        assert_refused(initialize(server, provider.token(key=rsa_key(f"made-up-{number}"))))
    assert provider.key_fetches() - before <= 1


def test_read_scope_calling_a_writing_tool_gets_403_naming_the_write_scope(
    server: TestClient, provider: Provider
) -> None:
    reader = provider.token(scope="openid doiget.read")
    for tool, arguments in (
        ("doiget_fetch_paper", {"ref": "10.1234/x"}),
        ("doiget_add_pdf", {"path": "/tmp/x.pdf"}),
        ("doiget_import_bibliography", {"path": "/tmp/x.bib"}),
        ("no_such_tool", {}),
    ):
        refused = call(server, reader, tool, arguments)
        assert refused.status_code == 403, tool
        challenge = refused.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="doiget.write"' in challenge
        error = refused.json()["error"]
        assert "doiget.write" in error["message"] and error["data"] == {"scope": "doiget.write"}


def test_a_token_without_the_read_scope_cannot_call_a_read_tool(
    server: TestClient, provider: Provider
) -> None:
    writer_only = provider.token(scope="doiget.write")
    refused = call(server, writer_only, "doiget_capability_profile", {})
    assert refused.status_code == 403
    assert 'scope="doiget.read"' in refused.headers["www-authenticate"]
    nothing = provider.token(scope="openid profile")
    assert call(server, nothing, "doiget_info", {"ref": "10.1/x"}).status_code == 403


def test_configured_scope_names_are_the_ones_asked_for(
    doiget_env: dict[str, str], provider: Provider
) -> None:
    extra = {
        "DOIGET_HTTP_OAUTH_READ_SCOPE": "lib:read",
        "DOIGET_HTTP_OAUTH_WRITE_SCOPE": "lib:write",
    }
    with serve(doiget_env, **extra) as client:
        defaults = provider.token(scope="doiget.read doiget.write")
        assert call(client, defaults, "doiget_capability_profile", {}).status_code == 403
        own = provider.token(scope="lib:read")
        assert call(client, own, "doiget_capability_profile", {}).status_code == 200
        refused = call(client, own, "doiget_fetch_paper", {"ref": "10.1/x"})
        assert 'scope="lib:write"' in refused.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("what", "discovery", "keys"),
    [
        ("provider down", Reply(503, b"down"), Reply(503, b"down")),
        ("no discovery document", Reply(404, b"not found"), None),
        (
            "key set is garbage",
            None,
            Reply(200, b"<html>oops</html>", {"Content-Type": "application/json"}),
        ),
        (
            "key set is not a list",
            None,
            Reply(200, b'{"keys": "k1"}', {"Content-Type": "application/json"}),
        ),
        (
            "key set holds no usable key",
            None,
            Reply(
                200,
                b'{"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "k1"}]}',
                {"Content-Type": "application/json"},
            ),
        ),
        (
            "key set is huge",
            None,
            Reply(
                200,
                b'{"keys": [' + b'{"kty":"RSA"},' * 40_000 + b"{}]}",
                {"Content-Type": "application/json"},
            ),
        ),
        ("discovery names another issuer", "elsewhere", None),
    ],
)
def test_a_provider_that_cannot_vouch_means_503_never_acceptance(
    doiget_env: dict[str, str], upstream: ReplayUpstream, what: str, discovery: Any, keys: Any
) -> None:
    idp = Provider(upstream)
    idp.publish(issuer="https://evil.example/realms/lab" if discovery == "elsewhere" else ISSUER)
    if isinstance(discovery, Reply):
        upstream.route(HOST, DISCOVERY, discovery)
        upstream.route(HOST, "/.well-known/oauth-authorization-server/realms/lab", discovery)
    if keys is not None:
        upstream.route(HOST, KEYS_PATH, keys)
    with serve(doiget_env) as client:
        response = initialize(client, idp.token())
        assert response.status_code == 503, f"{what}: {response.status_code} {response.text}"
        assert "identity provider" in response.json()["error_description"]
        assert response.headers["retry-after"]
        assert "mcp-session-id" not in response.headers
        ready = client.get("/readyz").json()
        assert ready["checks"]["identity_provider_keys"] is False


def test_cached_keys_keep_working_while_the_provider_is_down(
    server: TestClient, provider: Provider, upstream: ReplayUpstream
) -> None:
    assert initialize(server, provider.token()).status_code == 200
    upstream.route(HOST, DISCOVERY, Reply(503, b"down"))
    upstream.route(HOST, KEYS_PATH, Reply(503, b"down"))
    assert initialize(server, provider.token(sub="bob")).status_code == 200
    # A token with a key id not at hand cannot be checked, and is not accepted.
    assert initialize(server, provider.token(key=rsa_key("k9"))).status_code == 401
    assert server.get("/readyz").json()["checks"]["identity_provider_keys"] is True


def test_static_tokens_work_beside_oauth_with_every_scope(
    doiget_env: dict[str, str], provider: Provider
) -> None:
    with serve(doiget_env, DOIGET_HTTP_TOKENS=STATIC) as client:
        assert call(client, STATIC, "doiget_capability_profile", {}).status_code == 200
        assert initialize(client, provider.token()).status_code == 200
        assert_refused(initialize(client, "static-team-token-wrong-one"))


def test_the_access_log_names_the_subject_never_the_token(
    server: TestClient, provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="doiget.http")
    token = provider.token(sub="carol")
    assert initialize(server, token).status_code == 200
    lines = [record.getMessage() for record in caplog.records if record.name == "doiget.http"]
    assert any(f'"token":"carol@{ISSUER}"' in line for line in lines), lines
    assert all(
        token.split(".")[2] not in line and token.split(".")[1] not in line for line in lines
    )


def test_settings_that_cannot_be_honoured_refuse_the_start(doiget_env: dict[str, str]) -> None:
    from doiget.errors import DoigetError

    for extra in (
        {"DOIGET_HTTP_OAUTH_ISSUER": ISSUER},  # no resource URL
        {
            "DOIGET_HTTP_OAUTH_ISSUER": "http://sso.lab.example/realms/lab",
            "DOIGET_HTTP_RESOURCE_URL": RESOURCE,
        },
        {
            "DOIGET_HTTP_OAUTH_ISSUER": ISSUER,
            "DOIGET_HTTP_RESOURCE_URL": "http://doiget.lab.example/mcp",
        },
        {
            "DOIGET_HTTP_OAUTH_ISSUER": ISSUER,
            "DOIGET_HTTP_RESOURCE_URL": RESOURCE,
            "DOIGET_HTTP_OAUTH_READ_SCOPE": "a b",
        },
        {
            "DOIGET_HTTP_OAUTH_ISSUER": ISSUER,
            "DOIGET_HTTP_RESOURCE_URL": RESOURCE,
            "DOIGET_HTTP_OAUTH_WRITE_SCOPE": "doiget.read",
        },
        {
            "DOIGET_HTTP_OAUTH_ISSUER": ISSUER,
            "DOIGET_HTTP_RESOURCE_URL": RESOURCE,
            "DOIGET_HTTP_OAUTH_INTROSPECTION_URL": f"https://{HOST}/introspect",
        },
    ):
        with pytest.raises(DoigetError) as refused:
            load_runtime({**doiget_env, **extra}, http=True)
        assert refused.value.code.value == "INVALID_CONFIG"


@pytest.mark.parametrize("down", [False, True], ids=["keys at hand", "provider down"])
def test_health_says_whether_the_providers_keys_can_be_fetched(
    doiget_env: dict[str, str], provider: Provider, upstream: ReplayUpstream, down: bool
) -> None:
    from typer.testing import CliRunner

    from doiget.cli.main import app

    if down:
        upstream.route(HOST, KEYS_PATH, Reply(503, b"down"))
    env = {**doiget_env, "DOIGET_HTTP_OAUTH_ISSUER": ISSUER, "DOIGET_HTTP_RESOURCE_URL": RESOURCE}
    done = CliRunner().invoke(app, ["health", "--json"], env=env)
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)["identity_provider"]
    assert found["issuer"] == ISSUER and found["keys_at_hand"] is not down
    if down:
        assert "identity provider" in found["reason"]
    # One fetch when the keys come; a provider answering 503 is asked again (retries).
    assert provider.key_fetches() >= 1 if down else provider.key_fetches() == 1


INTROSPECTION = "/realms/lab/protocol/openid-connect/token/introspect"
CLIENT_ID = "doiget-resource"
CLIENT_SECRET = "introspection-client-secret-5f2a9c"


class Introspector:
    """The provider's introspection endpoint: what it says of each opaque token."""

    def __init__(self, upstream: ReplayUpstream) -> None:
        self.answers: dict[str, Any] = {}
        self.reply: Reply | None = None
        self.asked: list[Any] = []
        upstream.mount(HOST, self._answer)

    def _answer(self, request: Any) -> Reply:
        if request.path != INTROSPECTION:
            return Reply(404, b"not found")
        self.asked.append(request)
        if self.reply is not None:
            return self.reply
        token = parse_qs(request.body.decode("ascii")).get("token", [""])[0]
        body = json.dumps(self.answers.get(token, {"active": False})).encode()
        return Reply(200, body, {"Content-Type": "application/json"})


def active(**changes: Any) -> dict[str, Any]:
    """An introspection answer for an active read-and-write token of alice."""
    return {"active": True, "client_id": "claude-connector", **claims(**changes)}


@pytest.fixture
def introspector(provider: Provider, upstream: ReplayUpstream) -> Introspector:
    return Introspector(upstream)


@pytest.fixture
def opaque_server(doiget_env: dict[str, str], introspector: Introspector) -> Iterator[TestClient]:
    with serve(
        doiget_env,
        DOIGET_HTTP_OAUTH_INTROSPECTION_URL=f"https://{HOST}{INTROSPECTION}",
        DOIGET_HTTP_OAUTH_CLIENT_ID=CLIENT_ID,
        DOIGET_HTTP_OAUTH_CLIENT_SECRET=CLIENT_SECRET,
    ) as client:
        yield client


def test_an_active_opaque_token_is_asked_about_as_the_client_and_accepted(
    opaque_server: TestClient, introspector: Introspector
) -> None:
    introspector.answers["opaque-alice-1"] = active()
    assert initialize(opaque_server, "opaque-alice-1").status_code == 200
    asked = introspector.asked[0]
    assert asked.method == "POST"
    basic = base64.b64decode(asked.headers["authorization"].removeprefix("Basic "))
    assert basic.decode() == f"{CLIENT_ID}:{CLIENT_SECRET}"
    assert parse_qs(asked.body.decode())["token"] == ["opaque-alice-1"]
    # A read-only opaque token meets the same scope rule as a JWT.
    introspector.answers["opaque-reader"] = active(scope="doiget.read")
    refused = call(opaque_server, "opaque-reader", "doiget_fetch_paper", {"ref": "10.1/x"})
    assert refused.status_code == 403
    assert 'scope="doiget.write"' in refused.headers["www-authenticate"]


def test_every_opaque_token_the_provider_does_not_vouch_for_is_refused_with_401(
    opaque_server: TestClient, introspector: Introspector, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    now = int(time.time())
    variants: dict[str, Any] = {
        "inactive": {"active": False},
        "active as a string": {**active(), "active": "true"},
        "another audience": active(aud="https://other-service.example/api"),
        "audience missing": active(aud=None),
        "another issuer": active(iss="https://evil.example/realms/lab"),
        "expired": active(exp=now - 5),
        "not yet valid": active(nbf=now + 600),
        "no subject": active(sub=None),
        "an answer that is not an object": [active()],
    }
    for name, answer in variants.items():
        token = f"opaque-{name.replace(' ', '-')}"
        introspector.answers[token] = answer
        response = initialize(opaque_server, token)
        assert response.status_code == 401, f"{name}: {response.status_code}"
        assert_refused(response)
    assert CLIENT_SECRET not in caplog.text
    assert base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode() not in caplog.text
    assert all(f"opaque-{name.replace(' ', '-')}" not in caplog.text for name in variants)


@pytest.mark.parametrize(
    "reply",
    [Reply(503, b"down"), Reply(401, b'{"error":"invalid_client"}'), Reply(200, b"<html>")],
    ids=["down", "client refused", "garbage"],
)
def test_an_introspection_endpoint_that_cannot_answer_means_503_never_acceptance(
    opaque_server: TestClient, introspector: Introspector, reply: Reply
) -> None:
    introspector.answers["opaque-alice-1"] = active()
    introspector.reply = reply
    response = initialize(opaque_server, "opaque-alice-1")
    assert response.status_code == 503, response.text
    assert "mcp-session-id" not in response.headers
    assert CLIENT_SECRET not in response.text


def _read_resource(client: TestClient, token: str, uri: str) -> dict[str, Any]:
    """The JSON-RPC answer to resources/read of ``uri`` in a fresh session of ``token``."""
    headers = session(client, token)
    message = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}}
    answer = client.post(MCP, json=message, headers=headers)
    data = next(line for line in answer.text.splitlines() if line.startswith("data: "))
    return json.loads(data.removeprefix("data: "))  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "uri", ["research://artifact/0123456789abcdef", "zotero://collections", "doiget://anything"]
)
def test_reading_a_resource_needs_the_read_scope(
    server: TestClient, provider: Provider, uri: str
) -> None:
    for scope in ("openid profile", "doiget.write"):
        refused = _read_resource(server, provider.token(scope=scope), uri)
        assert refused["error"]["code"] == -32001, refused
        assert refused["error"]["data"]["scope"] == "doiget.read"
        assert "doiget.read" in refused["error"]["message"]
    allowed = _read_resource(server, provider.token(scope="doiget.read"), uri)
    assert allowed.get("error", {}).get("code") != -32001, allowed
