"""The DOIGET_HOST_MAP test seam: send named hosts to a loopback address and port.

Only the connection target changes. TLS SNI, certificate checks, the Host header,
allowlists and redirects keep using the real host name, so a test runs the real
program against a local server that impersonates each upstream by name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class HostTarget:
    """Where connections for one mapped host go."""

    address: str
    port: int

    def __str__(self) -> str:
        address = f"[{self.address}]" if ":" in self.address else self.address
        return f"{address}:{self.port}"


@dataclass(frozen=True)
class HostMap:
    """Host name -> loopback target. Empty unless DOIGET_HOST_MAP is set."""

    targets: Mapping[str, HostTarget] = field(default_factory=lambda: MappingProxyType({}))

    def lookup(self, host: str) -> HostTarget | None:
        """The target for ``host`` (case-insensitive), or None when it is not mapped."""
        return self.targets.get(host.lower().rstrip("."))

    def __bool__(self) -> bool:
        return bool(self.targets)

    def describe(self) -> str:
        """``host=addr:port,...`` for the stderr banner."""
        return ",".join(f"{host}={target}" for host, target in sorted(self.targets.items()))


def _parse_target(text: str) -> HostTarget:
    if text.startswith("["):
        address, sep, port_text = text[1:].partition("]:")
    else:
        address, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        raise ValueError(f"target {text!r} must be ADDRESS:PORT (IPv6 as [::1]:PORT)")
    port = int(port_text)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} of {text!r} is out of range")
    if address.lower() == "localhost":
        address = "127.0.0.1"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(f"target {text!r} must be a loopback IP address") from None
    if not ip.is_loopback:
        raise ValueError(
            f"target {text!r} is not a loopback address; the host map may only point at "
            "127.0.0.0/8 or ::1"
        )
    return HostTarget(str(ip), port)


def parse_host_map(raw: str) -> HostMap:
    """Parse ``host=addr:port,...``; raise ValueError naming the first bad entry."""
    targets: dict[str, HostTarget] = {}
    for entry in raw.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, sep, target = entry.partition("=")
        host = host.strip().lower().rstrip(".")
        if not sep or not host or not target.strip():
            raise ValueError(f"entry {entry!r} must be HOST=ADDRESS:PORT")
        targets[host] = _parse_target(target.strip())
    return HostMap(MappingProxyType(targets))
