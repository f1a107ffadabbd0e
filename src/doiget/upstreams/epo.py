"""EPO Open Patent Services (client: :mod:`doiget.web.patents.epo`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

KEY_VAR: Final = "EPO_OPS_KEY"
SECRET_VAR: Final = "EPO_OPS_SECRET"  # noqa: S105  # a variable name

UPSTREAM: Final = register(
    Upstream(
        name="epo",
        label="EPO Open Patent Services",
        role=Role.PATENT_SEARCH,
        hosts=("ops.epo.org",),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                KEY_VAR,
                "EPO Open Patent Services consumer key for patent_search (needs EPO_OPS_SECRET)",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.HEADER,
                carried_as="Authorization",
            ),
            Setting(
                SECRET_VAR,
                "EPO Open Patent Services consumer secret (needs EPO_OPS_KEY)",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.HEADER,
                carried_as="Authorization",
            ),
        ),
        factory="doiget.web.patents.epo:build",
        preference=2,
    )
)
