"""Brave Search API (client: :mod:`doiget.web.providers.brave`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, api_credential, keyed_web_api
from doiget.upstreams.registry import register

KEY_VAR: Final = "BRAVE_API_KEY"

UPSTREAM: Final = register(
    keyed_web_api(
        name="brave",
        label="Brave Search",
        role=Role.WEB_SEARCH,
        host="api.search.brave.com",
        settings=(
            api_credential(KEY_VAR, "Brave Search API key", carried_as="X-Subscription-Token"),
        ),
        factory="doiget.web.providers.brave:build",
        preference=2,
    )
)
