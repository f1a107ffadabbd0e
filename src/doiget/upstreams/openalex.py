"""OpenAlex works and their citation graph (client: :mod:`doiget.sources.openalex`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Gate, Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="openalex",
        label="OpenAlex",
        role=Role.SCHOLARLY,
        hosts=("api.openalex.org",),
        min_gap_s=0.0,
        toolsets=("papers", "web"),
        gate=Gate.OPT_IN,
        opt_in_var="DOIGET_ENABLE_OPENALEX",
    )
)
