"""Source reputation: a descriptive tier for hosts in a curated data file.

Hosts not in the file have no reputation (absence means unknown, not bad). A host
matches an entry for itself or for any parent domain (``www.nature.com`` matches
``nature.com``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from doiget.net.allowlist import normalise_host


@cache
def _dataset() -> tuple[str, dict[str, dict[str, str]]]:
    raw = json.loads(
        (resources.files("doiget.web") / "data" / "reputation.json").read_text("utf-8")
    )
    return str(raw["basis"]), {host.lower(): entry for host, entry in raw["domains"].items()}


def reputation_of(host: str) -> dict[str, Any] | None:
    """``{tier, basis, note?}`` for ``host``, or None when the host is not listed."""
    basis, domains = _dataset()
    labels = normalise_host(host).split(".")
    for start in range(len(labels) - 1):
        entry = domains.get(".".join(labels[start:]))
        if entry is not None:
            out: dict[str, Any] = {"tier": entry["tier"], "basis": basis}
            if entry.get("note"):
                out["note"] = entry["note"]
            return out
    return None
