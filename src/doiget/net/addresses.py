"""The SSRF guard: which addresses doiget may connect to for a host name.

A name is resolved once; if any of its addresses is loopback, private, link-local,
multicast, reserved, unspecified, CGNAT or a cloud metadata address (IPv4 or IPv6,
mapped and embedded forms included), the host is refused. Callers connect to the
addresses returned here, never to a second lookup, so DNS rebinding between check
and connect cannot move the connection.
"""

from __future__ import annotations

import ipaddress
import socket

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# Cloud metadata endpoints that are not already covered by link-local space.
_METADATA = (
    ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
)


class AddressRefused(Exception):
    """A host resolved to (or is) an address doiget never connects to."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(f"{host} resolves to {address}, a non-public address")
        self.host = host
        self.address = address


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    # IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::/96) forms.
    packed = ip.packed
    if packed[:12] == bytes(12) or packed[:12] == bytes.fromhex("0064ff9b0000000000000000"):
        return ipaddress.IPv4Address(packed[12:])
    return None


def is_public_address(ip: IPAddress) -> bool:
    """True only for globally routable unicast addresses."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # Mapped, 6to4, Teredo and NAT64 forms reach the IPv4 address they carry.
            return is_public_address(embedded)
    if ip in _METADATA or (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT):
        return False
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


def literal_address(host: str) -> IPAddress | None:
    """The address a host string denotes by itself, in any form a resolver accepts.

    Covers dotted quads, IPv6 (bracketed or not) and the legacy forms that
    ``inet_aton`` takes (``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``).
    """
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def check_literal(host: str) -> None:
    """Refuse a host that is itself a non-public IP literal, before any lookup."""
    ip = literal_address(host)
    if ip is not None and not is_public_address(ip):
        raise AddressRefused(host, str(ip))


async def resolve_public(host: str, port: int) -> list[str]:
    """Resolve ``host`` once and return its addresses, refusing any non-public one."""
    check_literal(host)
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        text = str(sockaddr[0])
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if not is_public_address(ip):
            raise AddressRefused(host, text)
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise OSError(f"{host} did not resolve to any address")
    return addresses
