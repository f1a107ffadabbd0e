"""PubMed through NCBI E-utilities (client: :mod:`doiget.sources.pubmed`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

# 3 requests/s without a key, 10/s with one.
UPSTREAM: Final = register(
    Upstream(
        name="pubmed",
        label="PubMed",
        role=Role.SCHOLARLY,
        hosts=("eutils.ncbi.nlm.nih.gov",),
        min_gap_s=1 / 3,
        keyed_min_gap_s=0.1,
        keyed_by="PUBMED_API_KEY",
        toolsets=("scholar", "web"),
        settings=(
            Setting(
                "PUBMED_API_KEY",
                "NCBI E-utilities key (its ceiling rises from 3/s to 10/s); sent with tool=doiget",
                redaction=Redaction.VALUE,
                carrier=Carrier.QUERY,
                carried_as="api_key",
            ),
            Setting(
                "PUBMED_EMAIL",
                "contact address sent to NCBI E-utilities (default: DOIGET_EMAIL)",
                config_key="pubmed_email",
            ),
        ),
    )
)
