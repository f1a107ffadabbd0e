"""An operator's SearXNG instance (client: :mod:`doiget.web.providers.searxng`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Redaction, Role, Setting, operator_endpoint
from doiget.upstreams.registry import register

URL_VAR: Final = "SEARXNG_URL"

UPSTREAM: Final = register(
    operator_endpoint(
        name="searxng",
        label="SearXNG",
        role=Role.WEB_SEARCH,
        toolsets=("web",),
        url=Setting(
            URL_VAR,
            "base URL of a SearXNG instance (its JSON API must be enabled); a password "
            "in it is redacted",
            config_key="searxng_url",
            required=True,
            url=True,
            redaction=Redaction.USERINFO,
            carrier=Carrier.USERINFO,
        ),
        factory="doiget.web.providers.searxng:build",
        preference=1,
    )
)
