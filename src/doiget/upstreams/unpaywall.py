"""Unpaywall: Open Access status of a DOI (client: :mod:`doiget.sources.unpaywall`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="unpaywall",
        label="Unpaywall",
        role=Role.SCHOLARLY,
        hosts=("api.unpaywall.org",),
        min_gap_s=0.0,
        toolsets=("papers", "web"),
    )
)
