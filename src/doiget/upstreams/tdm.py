"""Text-and-data-mining publishers: used only under a grant the user gave.

A TDM source is granted when its ``DOIGET_AGREE_TDM_*`` is exactly 1 and its
``DOIGET_KEY_*`` is set (see :mod:`doiget.capability`). The keys are declared here
so they are redacted wherever they could surface.
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


def _publisher(name: str, label: str, carrier: Carrier, carried_as: str) -> Upstream:
    return register(
        Upstream(
            name=name,
            label=label,
            role=Role.TDM,
            hosts=(),
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


ELSEVIER: Final = _publisher("elsevier", "Elsevier", Carrier.HEADER, "X-ELS-APIKey")
APS: Final = _publisher("aps", "APS Harvest", Carrier.HEADER, "Authorization")
SPRINGER: Final = _publisher("springer", "Springer Nature", Carrier.QUERY, "api_key")
