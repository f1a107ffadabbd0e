"""DOAJ article records (client: :mod:`doiget.sources.doaj`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Gate, Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="doaj",
        label="DOAJ",
        role=Role.SCHOLARLY,
        hosts=("doaj.org", "*.doaj.org"),
        min_gap_s=0.0,
        toolsets=("papers",),
        gate=Gate.OPT_IN,
        opt_in_var="DOIGET_ENABLE_DOAJ",
    )
)
