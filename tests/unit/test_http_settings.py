"""serve --http settings: defaults, refusals in words, and the Host names allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError, ErrorCode
from doiget.httpconfig import HttpSettings


def settings(tmp_path: Path, **env: str) -> HttpSettings:
    base = {"DOIGET_CONFIG": str(tmp_path / "config.toml"), "DOIGET_DATA_DIR": str(tmp_path)}
    return load_settings({**base, **env}).http


def test_defaults(tmp_path: Path) -> None:
    http = settings(tmp_path)
    assert (http.host, http.port, http.rate_per_minute) == ("127.0.0.1", 8765, 600)
    assert http.loopback and not http.insecure_no_auth and http.allowed_origins == ()
    assert http.host_headers() == ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DOIGET_HTTP_PORT", "0"),
        ("DOIGET_HTTP_PORT", "http"),
        ("DOIGET_HTTP_RATE", "-5"),
        ("DOIGET_HTTP_MAX_BODY", "10"),
        ("DOIGET_HTTP_SHUTDOWN_GRACE", "soon"),
    ],
)
def test_a_value_that_cannot_be_used_refuses_the_start(
    tmp_path: Path, name: str, value: str
) -> None:
    with pytest.raises(DoigetError) as refused:
        settings(tmp_path, **{name: value})
    assert refused.value.code is ErrorCode.INVALID_CONFIG
    assert name in refused.value.message


def test_hosts_for_a_public_bind_come_from_the_setting(tmp_path: Path) -> None:
    http = settings(
        tmp_path,
        DOIGET_HTTP_HOST="0.0.0.0",
        DOIGET_HTTP_ALLOWED_HOSTS="doiget.example.org, doiget.example.org:443",
        DOIGET_HTTP_ALLOWED_ORIGINS="https://app.example.org/",
    )
    assert not http.loopback
    assert http.host_headers() == ["doiget.example.org:8765", "doiget.example.org:443"]
    assert http.allowed_origins == ("https://app.example.org",)


def test_tokens_given_inline_are_secrets(tmp_path: Path) -> None:
    from doiget.redaction import redact_known

    http = settings(tmp_path, DOIGET_HTTP_TOKENS="abcdefghijklmnop1234, qrstuvwxyzabcdef5678")
    assert http.token_values() == ["abcdefghijklmnop1234", "qrstuvwxyzabcdef5678"]
    assert "abcdefghijklmnop" not in redact_known("token abcdefghijklmnop1234 seen")
    assert "abcdefghijklmnop" not in repr(http)


@pytest.mark.parametrize(
    ("value", "config", "stdio", "http"),
    [
        (None, "", False, True),  # the face decides: processes for a team over HTTP
        ("1", "", True, True),
        ("off", "", False, False),
        (None, "search_processes = true\n", True, True),
        ("0", "search_processes = true\n", False, False),  # the environment wins
    ],
)
def test_searches_run_in_worker_processes_over_http_unless_told(
    tmp_path: Path, value: str | None, config: str, stdio: bool, http: bool
) -> None:
    from doiget.runtime import load_runtime

    (tmp_path / "config.toml").write_text(config)
    env = {"DOIGET_CONFIG": str(tmp_path / "config.toml"), "DOIGET_DATA_DIR": str(tmp_path)}
    if value is not None:
        env["DOIGET_SEARCH_PROCESSES"] = value
    for serving_http, apart in ((False, stdio), (True, http)):
        runtime = load_runtime(env, http=serving_http)
        assert [runtime.pool(lane).apart for lane in ("papers", "library")] == [apart, apart]
        for pool in (runtime.pool("papers"), runtime.pool("library")):
            pool.close()


def test_a_search_processes_value_that_is_no_switch_refuses_the_start(tmp_path: Path) -> None:
    with pytest.raises(DoigetError) as refused:
        settings(tmp_path, DOIGET_SEARCH_PROCESSES="several")
    assert "DOIGET_SEARCH_PROCESSES" in refused.value.message
