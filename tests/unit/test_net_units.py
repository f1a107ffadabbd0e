"""Pure pieces of the network layer: host map, address checks, allowlists, redaction."""

from __future__ import annotations

import ipaddress

import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError, ErrorCode
from doiget.hostmap import parse_host_map
from doiget.net.addresses import is_public_address, literal_address
from doiget.net.allowlist import allowlist_for, host_matches
from doiget.net.ratelimit import min_gap_seconds
from doiget.net.redact import redact_url
from doiget.secret import Secret


def test_host_map_parses_loopback_targets() -> None:
    host_map = parse_host_map(
        "api.crossref.org=127.0.0.1:8443, arxiv.org=[::1]:9000,x.org=localhost:1"
    )
    assert str(host_map.lookup("API.CROSSREF.ORG.")) == "127.0.0.1:8443"
    assert str(host_map.lookup("arxiv.org")) == "[::1]:9000"
    assert str(host_map.lookup("x.org")) == "127.0.0.1:1"
    assert host_map.lookup("other.org") is None


@pytest.mark.parametrize(
    "raw",
    [
        "api.crossref.org=10.0.0.5:443",
        "api.crossref.org=93.184.216.34:443",
        "api.crossref.org=evil.example:443",
        "api.crossref.org=127.0.0.1",
        "api.crossref.org=127.0.0.1:99999",
        "api.crossref.org",
    ],
)
def test_non_loopback_or_malformed_host_map_refuses_start(raw: str) -> None:
    with pytest.raises(DoigetError) as caught:
        load_settings({"DOIGET_HOST_MAP": raw, "DOIGET_CONFIG": "/nonexistent/config.toml"})
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "DOIGET_HOST_MAP" in caught.value.message


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:4700::6810:85e5", True),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.216.34", True),
        ("64:ff9b::a9fe:a9fe", False),
        ("2002:7f00:1::", False),
        ("::", False),
    ],
)
def test_public_address_classification(address: str, public: bool) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is public


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0x7f000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("example.org", None),
    ],
)
def test_literal_forms_are_recognised(host: str, address: str | None) -> None:
    found = literal_address(host)
    assert (str(found) if found else None) == address


def test_wildcard_matches_domain_and_subdomains_only() -> None:
    assert host_matches("nature.com", "*.nature.com")
    assert host_matches("www.nature.com", "*.nature.com")
    assert not host_matches("notnature.com", "*.nature.com")
    assert not host_matches("nature.com.evil.example", "*.nature.com")
    assert host_matches("API.Crossref.org.", "api.crossref.org")


def test_allowlists_are_per_source_and_extendable() -> None:
    crossref = allowlist_for("crossref", {"unpaywall": ["mirror.example"]})
    unpaywall = allowlist_for("unpaywall", {"unpaywall": ["mirror.example"]})
    assert not crossref.allows("mirror.example")
    assert unpaywall.allows("mirror.example")
    assert crossref.allows("doi.org")
    assert not crossref.allows("api.unpaywall.org")


def test_ceilings_are_never_looser_than_the_per_source_gap() -> None:
    assert min_gap_seconds("crossref") == 0.2
    assert min_gap_seconds("arxiv") == 3.0
    assert min_gap_seconds("s2") == 1.0
    assert min_gap_seconds("s2", keyed=True) == 0.2
    assert min_gap_seconds("pubmed") == pytest.approx(1 / 3)
    assert min_gap_seconds("pubmed", keyed=True) == 0.2


def test_redact_url_hides_keys_and_userinfo() -> None:
    url = "https://user:pw@api.example.org/x?api_key=SECRET&q=1&apiKey=S2&token=T"
    redacted = redact_url(url)
    for secret in ("SECRET", "S2", "pw", "=T"):
        assert secret not in redacted
    assert "q=1" in redacted


def test_secret_never_prints() -> None:
    secret = Secret("abc123")
    assert "abc123" not in f"{secret} {secret!r} {[secret]} {secret:>20}"
    assert secret.reveal() == "abc123"
