"""Publisher and repository hosts an Open Access copy may be fetched from.

Unpaywall and the metadata sources point at free copies on these hosts; the papers
toolset fetches them under the one source name ``oa-publisher``.
"""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="oa-publisher",
        label="Open Access publisher hosts",
        role=Role.SCHOLARLY,
        hosts=(
            "*.springer.com",
            "*.springeropen.com",
            "*.springernature.com",
            "*.nature.com",
            "*.wiley.com",
            "*.elsevier.com",
            "*.sciencedirect.com",
            "*.frontiersin.org",
            "*.mdpi.com",
            "*.plos.org",
            "*.biorxiv.org",
            "*.medrxiv.org",
            "europepmc.org",
            "*.europepmc.org",
            "*.nih.gov",
            "*.aps.org",
            "scipost.org",
            "*.scipost.org",
            "*.iop.org",
            "doaj.org",
            "*.doaj.org",
            "arxiv.org",
            "*.arxiv.org",
        ),
        min_gap_s=0.0,
        toolsets=("papers",),
    )
)
