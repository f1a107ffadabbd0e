"""Crossref: the bibliographic record of a DOI (client: :mod:`doiget.sources.crossref`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="crossref",
        label="Crossref",
        role=Role.SCHOLARLY,
        hosts=("api.crossref.org", "*.crossref.org"),
        min_gap_s=0.0,
        toolsets=("papers", "scholar", "web"),
    )
)
