"""Every special-purpose block that is not globally reachable is refused, by literal,
by name resolution and through scrape_page, without a connection ever being opened."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import httpcore
import pytest

from doiget.contract import parse
from doiget.errors import DoigetError
from doiget.net import addresses
from doiget.net.addresses import (
    REACHABLE_EXCEPTIONS,
    REFUSED_BLOCKS,
    AddressRefused,
    check_literal,
    is_public_address,
    resolve_public,
)
from doiget.web.failure import Kind, failure_of
from doiget.web.requests import ScrapePageRequest
from doiget.web.scrape.service import Scraper

from netutil import make_network

# One address inside each block (not its first address, so that a check of only the
# network address would not pass), by the block's registry name.
ONE_PER_BLOCK: dict[str, str] = {
    "0.0.0.0/8": "0.1.2.3",
    "10.0.0.0/8": "10.20.30.40",
    "100.64.0.0/10": "100.100.100.200",
    "127.0.0.0/8": "127.4.5.6",
    "169.254.0.0/16": "169.254.169.254",
    "172.16.0.0/12": "172.31.255.1",
    "192.0.0.0/24": "192.0.0.170",
    "192.0.2.0/24": "192.0.2.55",
    "192.88.99.0/24": "192.88.99.1",
    "192.168.0.0/16": "192.168.1.1",
    "198.18.0.0/15": "198.19.0.7",
    "198.51.100.0/24": "198.51.100.9",
    "203.0.113.0/24": "203.0.113.200",
    "224.0.0.0/4": "239.255.255.250",
    "240.0.0.0/4": "250.1.1.1",
    "255.255.255.255/32": "255.255.255.255",
    "::/128": "::",
    "::1/128": "::1",
    "::/96": "::10.0.0.1",
    "64:ff9b:1::/48": "64:ff9b:1::808:808",
    "100::/64": "100::dead",
    "100:0:0:1::/64": "100:0:0:1::1",
    "2001::/23": "2001:0:8000::1",
    "2001:2::/48": "2001:2::9",
    "2001:10::/28": "2001:10::1",
    "2001:db8::/32": "2001:db8:1::1",
    "3fff::/20": "3fff:fff::1",
    "5f00::/16": "5f00:1::1",
    "fc00::/7": "fd00:ec2::254",
    "fe80::/10": "fe80::1",
    "fec0::/10": "fec0::1",
    "ff00::/8": "ff02::1",
}

# Wrappings that reach a non-global IPv4 address through a global-looking prefix.
WRAPPED = [
    "::ffff:192.0.2.1",  # IPv4-mapped documentation address
    "2002:c000:0201::1",  # 6to4 of 192.0.2.1
    "2002:0a00:0001::1",  # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    "64:ff9b::198.18.0.1",  # NAT64 of a benchmarking address
    "64:ff9b::127.0.0.1",
]

# Other spellings a resolver accepts for a refused address.
SPELLINGS = ["0xc0.0.2.1", "3221225985", "0300.0.2.1", "192.0.2.1.", "[fe80::1%eth0]", "[FEC0::1]"]

GLOBAL = [
    "8.8.8.8",
    "1.1.1.1",
    "192.0.0.9",
    "2001:1::1",
    "2606:4700:4700::1111",
    "64:ff9b::808:808",
]


def test_every_block_has_an_example_inside_it() -> None:
    assert set(ONE_PER_BLOCK) == {str(block.network) for block in REFUSED_BLOCKS}
    for cidr, example in ONE_PER_BLOCK.items():
        assert ipaddress.ip_address(example) in ipaddress.ip_network(cidr)


@pytest.mark.parametrize("address", list(ONE_PER_BLOCK.values()) + WRAPPED)
def test_special_purpose_literal_is_refused(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))
    with pytest.raises(AddressRefused):
        check_literal(f"[{address}]" if ":" in address else address)


@pytest.mark.parametrize("host", SPELLINGS)
def test_other_spellings_of_refused_addresses_are_refused(host: str) -> None:
    with pytest.raises(AddressRefused):
        check_literal(host)


@pytest.mark.parametrize("address", GLOBAL)
def test_globally_reachable_addresses_pass(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


def test_reachable_exceptions_lie_inside_a_refused_block() -> None:
    for exception in REACHABLE_EXCEPTIONS:
        assert any(
            exception.network.version == block.network.version
            and exception.network.subnet_of(block.network)  # type: ignore[arg-type]
            for block in REFUSED_BLOCKS
        ), exception.name


@pytest.mark.parametrize("address", list(ONE_PER_BLOCK.values()) + WRAPPED)
async def test_name_resolving_into_a_block_is_refused(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    async def fake_getaddrinfo(host: str, port: int, **_: Any) -> list[Any]:
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(addresses.anyio, "getaddrinfo", fake_getaddrinfo)
    with pytest.raises(AddressRefused):
        await resolve_public("innocent.example.org", 443)


class NoConnections(httpcore.AsyncNetworkBackend):
    """A socket layer that fails the test if anything tries to connect."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        self.attempts.append((host, port))
        raise AssertionError(f"a connection to {host}:{port} was attempted")


@pytest.mark.parametrize("address", list(ONE_PER_BLOCK.values()) + WRAPPED + SPELLINGS[:3])
async def test_scrape_page_refuses_every_block_without_connecting(
    doiget_env: dict[str, str], address: str
) -> None:
    host = f"[{address}]" if ":" in address and not address.startswith("[") else address
    backend = NoConnections()
    network = make_network(doiget_env, backend=backend)
    try:
        with pytest.raises(DoigetError) as caught:
            await Scraper(network).scrape(parse(ScrapePageRequest, {"url": f"http://{host}/"}))
    finally:
        await network.aclose()
    assert backend.attempts == []
    assert failure_of(caught.value).kind is Kind.VALIDATION
