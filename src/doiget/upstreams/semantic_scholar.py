"""Semantic Scholar Graph API (client: :mod:`doiget.sources.semantic_scholar`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

# 1 request/s without a key, 10/s with one. Papers resolution lists it as
# "semantic_scholar" (the capability profile's spelling); everywhere else it is "s2".
UPSTREAM: Final = register(
    Upstream(
        name="s2",
        label="Semantic Scholar",
        role=Role.SCHOLARLY,
        hosts=("api.semanticscholar.org",),
        min_gap_s=1.0,
        keyed_min_gap_s=0.1,
        keyed_by="SEMANTIC_SCHOLAR_API_KEY",
        toolsets=("papers", "scholar", "web"),
        gate=Gate.OPT_IN,
        opt_in_var="DOIGET_ENABLE_S2",
        listed_as="semantic_scholar",
        settings=(
            Setting(
                "SEMANTIC_SCHOLAR_API_KEY",
                "Semantic Scholar key (its ceiling rises from 1/s to 10/s; the 200 ms "
                "per-source gap still holds)",
                redaction=Redaction.VALUE,
                carrier=Carrier.HEADER,
                carried_as="x-api-key",
            ),
        ),
    )
)
