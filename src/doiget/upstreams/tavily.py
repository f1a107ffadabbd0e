"""Tavily search API (client: :mod:`doiget.web.providers.tavily`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, api_credential, keyed_web_api
from doiget.upstreams.registry import register

KEY_VAR: Final = "TAVILY_API_KEY"

UPSTREAM: Final = register(
    keyed_web_api(
        name="tavily",
        label="Tavily",
        role=Role.WEB_SEARCH,
        host="api.tavily.com",
        settings=(api_credential(KEY_VAR, "Tavily API key", carried_as="Authorization"),),
        factory="doiget.web.providers.tavily:build",
        preference=3,
    )
)
