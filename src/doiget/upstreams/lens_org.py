"""Lens.org patent API (client: :mod:`doiget.web.patents.lens`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

KEY_VAR: Final = "LENS_API_TOKEN"

UPSTREAM: Final = register(
    Upstream(
        name="lens",
        label="Lens.org",
        role=Role.PATENT_SEARCH,
        hosts=("api.lens.org",),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                KEY_VAR,
                "Lens.org patent API token (patent_search)",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.HEADER,
                carried_as="Authorization",
            ),
        ),
        factory="doiget.web.patents.lens:build",
        # Tried first: it honours every filter of the tool as asked.
        preference=1,
    )
)
