"""An operator's SearXNG instance (client: :mod:`doiget.web.providers.searxng`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Gate, Role, Scheme, Setting, Upstream
from doiget.upstreams.registry import register

URL_VAR: Final = "SEARXNG_URL"

UPSTREAM: Final = register(
    Upstream(
        name="searxng",
        label="SearXNG",
        role=Role.WEB_SEARCH,
        hosts=(),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        scheme=Scheme.ENDPOINT,
        endpoint=URL_VAR,
        settings=(
            Setting(
                URL_VAR,
                "base URL of a SearXNG instance (its JSON API must be enabled)",
                config_key="searxng_url",
                required=True,
                url=True,
            ),
        ),
        factory="doiget.web.providers.searxng:build",
        preference=1,
    )
)
