"""Google Programmable Search (client: :mod:`doiget.web.providers.google`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Role, Setting, api_credential, keyed_web_api
from doiget.upstreams.registry import register

KEY_VAR: Final = "GOOGLE_API_KEY"
CX_VAR: Final = "GOOGLE_CX"

UPSTREAM: Final = register(
    keyed_web_api(
        name="google",
        label="Google Programmable Search",
        role=Role.WEB_SEARCH,
        host="www.googleapis.com",
        settings=(
            api_credential(
                KEY_VAR,
                "Google Programmable Search API key (needs GOOGLE_CX)",
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
