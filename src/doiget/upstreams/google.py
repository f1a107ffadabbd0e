"""Google Programmable Search (client: :mod:`doiget.web.providers.google`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

KEY_VAR: Final = "GOOGLE_API_KEY"
CX_VAR: Final = "GOOGLE_CX"

UPSTREAM: Final = register(
    Upstream(
        name="google",
        label="Google Programmable Search",
        role=Role.WEB_SEARCH,
        hosts=("www.googleapis.com",),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                KEY_VAR,
                "Google Programmable Search API key (needs GOOGLE_CX)",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.QUERY,
                carried_as="key",
            ),
            Setting(
                CX_VAR,
                "Google Programmable Search engine id (needs GOOGLE_API_KEY)",
                config_key="google_cx",
                required=True,
            ),
        ),
        factory="doiget.web.providers.google:build",
        preference=4,
    )
)
