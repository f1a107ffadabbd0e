"""Tavily search API (client: :mod:`doiget.web.providers.tavily`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Gate, Redaction, Role, Setting, Upstream
from doiget.upstreams.registry import register

KEY_VAR: Final = "TAVILY_API_KEY"

UPSTREAM: Final = register(
    Upstream(
        name="tavily",
        label="Tavily",
        role=Role.WEB_SEARCH,
        hosts=("api.tavily.com",),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                KEY_VAR,
                "Tavily API key",
                redaction=Redaction.VALUE,
                required=True,
                carrier=Carrier.HEADER,
                carried_as="Authorization",
            ),
        ),
        factory="doiget.web.providers.tavily:build",
        preference=3,
    )
)
