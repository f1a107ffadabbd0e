"""Text-and-data-mining publishers: used only under a grant the user gave.

A TDM source is granted when its ``DOIGET_AGREE_TDM_*`` is exactly 1 and its
``DOIGET_KEY_*`` is set (see :mod:`doiget.capability`). The keys are declared here
so they are redacted wherever they could surface. The sources themselves are the
separate ``doiget-tdm`` distribution (``pip install -e '.[tdm]'``); without it a
grant is reported and refused as not installed.

Each publisher is scoped to its own DOI prefixes: no other DOI is ever sent to it.
Their request ceilings: Elsevier publishes 10 requests a second for article
retrieval, APS and Springer Nature publish daily quotas only; the 200 ms per-source
gap of the rate gate is stricter than any of them, so it paces all three.
"""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import (
    Carrier,
    Gate,
    Redaction,
    Role,
    Setting,
    Upstream,
    agree_var,
    key_var,
)
from doiget.upstreams.registry import register


def _publisher(
    name: str,
    label: str,
    carrier: Carrier,
    carried_as: str,
    *,
    hosts: tuple[str, ...],
    prefixes: tuple[str, ...],
) -> Upstream:
    return register(
        Upstream(
            name=name,
            label=label,
            role=Role.TDM,
            hosts=hosts,
            doi_prefixes=prefixes,
            min_gap_s=0.0,
            toolsets=("papers",),
            gate=Gate.TDM,
            settings=(
                Setting(
                    agree_var(name),
                    f"=1 accepts {label}'s TDM terms (needs {key_var(name)})",
                ),
                Setting(
                    key_var(name),
                    f"{label} TDM API key (needs {agree_var(name)}=1)",
                    redaction=Redaction.VALUE,
                    carrier=carrier,
                    carried_as=carried_as,
                ),
            ),
        )
    )


ELSEVIER: Final = _publisher(
    "elsevier",
    "Elsevier",
    Carrier.HEADER,
    "X-ELS-APIKey",
    hosts=("api.elsevier.com",),
    # Elsevier, and the imprints whose DOIs it registers (Academic Press, W.B.
    # Saunders, Churchill Livingstone, Mosby, Urban & Fischer).
    prefixes=("10.1016", "10.1006", "10.1053", "10.1054", "10.1067", "10.1078"),
)
APS: Final = _publisher(
    "aps",
    "APS Harvest",
    Carrier.HEADER,
    "Authorization",
    hosts=("harvest.aps.org",),
    prefixes=("10.1103",),
)
SPRINGER: Final = _publisher(
    "springer",
    "Springer Nature",
    Carrier.QUERY,
    "api_key",
    # The Open Access API, then the PDF from SpringerLink.
    hosts=("api.springernature.com", "link.springer.com"),
    # Springer, Nature, BioMed Central, Palgrave Macmillan, EPJ, Kluwer.
    prefixes=("10.1007", "10.1038", "10.1186", "10.1057", "10.1140", "10.1023"),
)
