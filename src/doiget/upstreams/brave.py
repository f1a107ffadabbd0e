"""Brave Search API (client: :mod:`doiget.web.providers.brave`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

KEY_VAR: Final = "BRAVE_API_KEY"

UPSTREAM: Final = register(
    Upstream(
        name="brave",
        label="Brave Search",
        role=Role.WEB_SEARCH,
        hosts=("api.search.brave.com",),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                KEY_VAR,
                "Brave Search API key",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.HEADER,
                carried_as="X-Subscription-Token",
            ),
        ),
        factory="doiget.web.providers.brave:build",
        preference=2,
    )
)
