"""The SSRF guard: which addresses doiget may connect to for a host name.

A name is resolved once; if any of its addresses is not globally reachable (every
block of the IANA special-purpose registries so marked, multicast, and IPv6 outside
global unicast space; mapped, 6to4, Teredo and NAT64 forms judged by the IPv4
address they carry), the host is refused. Cloud metadata addresses sit inside
these blocks (169.254.169.254, 100.100.100.200, fd00:ec2::254). Callers connect to the
addresses returned here, never to a second lookup, so DNS rebinding between check
and connect cannot move the connection.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Final

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class SpecialBlock:
    """One entry of the IANA special-purpose address registries (or a block the
    registries leave out but no public host lives in), by its registry name."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    name: str


def _blocks(*entries: tuple[str, str]) -> tuple[SpecialBlock, ...]:
    return tuple(SpecialBlock(ipaddress.ip_network(cidr), name) for cidr, name in entries)


# Blocks whose addresses are not globally reachable: the IANA IPv4 and IPv6
# special-purpose registries' rows marked "Globally Reachable: False" or "N/A",
# plus multicast, deprecated site-local and the deprecated ORCHID block.
REFUSED_BLOCKS: Final = _blocks(
    ("0.0.0.0/8", "This network"),
    ("10.0.0.0/8", "Private-Use"),
    ("100.64.0.0/10", "Shared Address Space"),
    ("127.0.0.0/8", "Loopback"),
    ("169.254.0.0/16", "Link Local"),
    ("172.16.0.0/12", "Private-Use"),
    ("192.0.0.0/24", "IETF Protocol Assignments"),
    ("192.0.2.0/24", "Documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)"),
    ("192.168.0.0/16", "Private-Use"),
    ("198.18.0.0/15", "Benchmarking"),
    ("198.51.100.0/24", "Documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "Documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "Multicast"),
    ("240.0.0.0/4", "Reserved"),
    ("255.255.255.255/32", "Limited Broadcast"),
    ("::/128", "Unspecified Address"),
    ("::1/128", "Loopback Address"),
    ("::/96", "IPv4-compatible (deprecated)"),
    ("64:ff9b:1::/48", "IPv4-IPv6 Translat. (local use)"),
    ("100::/64", "Discard-Only Address Block"),
    ("100:0:0:1::/64", "Dummy IPv6 Prefix"),
    ("2001::/23", "IETF Protocol Assignments"),
    ("2001:2::/48", "Benchmarking"),
    ("2001:10::/28", "Deprecated (previously ORCHID)"),
    ("2001:db8::/32", "Documentation"),
    ("3fff::/20", "Documentation"),
    ("5f00::/16", "Segment Routing (SRv6) SIDs"),
    ("fc00::/7", "Unique-Local"),
    ("fe80::/10", "Link-Local Unicast"),
    ("fec0::/10", "Site-Local (deprecated)"),
    ("ff00::/8", "Multicast"),
)

# Rows inside a refused block that the registries mark globally reachable.
REACHABLE_EXCEPTIONS: Final = _blocks(
    ("192.0.0.9/32", "Port Control Protocol Anycast"),
    ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast"),
    ("2001:1::1/128", "Port Control Protocol Anycast"),
    ("2001:1::2/128", "Traversal Using Relays around NAT Anycast"),
    ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast"),
    ("2001:3::/32", "AMT"),
    ("2001:4:112::/48", "AS112-v6"),
    ("2001:20::/28", "ORCHIDv2"),
    ("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix"),
)

# IPv6 hosts live in global unicast space; anything outside it is unassigned or
# special (the translation prefixes are judged by the IPv4 address they carry).
_GLOBAL_UNICAST_V6: Final = ipaddress.IPv6Network("2000::/3")
_NAT64_WELL_KNOWN: Final = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefused(Exception):
    """A host resolved to (or is) an address doiget never connects to."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(f"{host} resolves to {address}, a non-public address")
        self.host = host
        self.address = address

    @property
    def block(self) -> str:
        """The registry name of the block the address is in (for messages)."""
        ip = ipaddress.ip_address(self.address.split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(ip)):
            ip = embedded
        found = special_block(ip)
        return found.name if found is not None else "outside global unicast space"


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, 6to4, Teredo or NAT64 address reaches."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(ip.packed[12:])
    return None


def special_block(ip: IPAddress) -> SpecialBlock | None:
    """The refused block ``ip`` falls in, or None when it is globally reachable."""
    if _containing(REACHABLE_EXCEPTIONS, ip) is not None:
        return None
    return _containing(REFUSED_BLOCKS, ip)


def _containing(blocks: tuple[SpecialBlock, ...], ip: IPAddress) -> SpecialBlock | None:
    for block in blocks:
        if block.network.version == ip.version and ip in block.network:
            return block
    return None


def is_public_address(ip: IPAddress) -> bool:
    """True only for globally reachable unicast addresses."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            # These forms reach the IPv4 address they carry.
            return is_public_address(embedded)
        if ip not in _GLOBAL_UNICAST_V6:
            return False
    return special_block(ip) is None


def literal_address(host: str) -> IPAddress | None:
    """The address a host string denotes by itself, in any form a resolver accepts.

    Covers dotted quads, IPv6 (bracketed or not) and the legacy forms that
    ``inet_aton`` takes (``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``).
    """
    text = host.strip("[]").removesuffix(".")
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
