"""DBLP: the computer-science bibliography's publication search (client:
:mod:`doiget.sources.dblp`).

Most machine-learning proceedings (NeurIPS, ICML, ICLR) carry no Crossref DOI, so
DBLP is the record that confirms them. DBLP asks automated clients to wait at least
one or two seconds between two requests and answers 429 with Retry-After beyond
that; no key exists.
"""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="dblp",
        label="DBLP",
        role=Role.SCHOLARLY,
        hosts=("dblp.org",),
        min_gap_s=1.0,
        toolsets=("papers",),
    )
)
