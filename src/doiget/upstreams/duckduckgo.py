"""DuckDuckGo's HTML results page, the keyless web search provider
(client: :mod:`doiget.web.providers.duckduckgo`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="duckduckgo",
        label="DuckDuckGo",
        role=Role.WEB_SEARCH,
        hosts=("html.duckduckgo.com", "duckduckgo.com"),
        min_gap_s=0.0,
        toolsets=("web",),
        factory="doiget.web.providers.duckduckgo:build",
        preference=5,
    )
)
