"""Services the operator runs for doiget (a Qdrant server, a Redis instance).

They are reached through their own client libraries, not doiget's network, but their
credentials are declared here so redaction and the settings table know them.
"""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Carrier, Redaction, Role, Setting, operator_endpoint
from doiget.upstreams.registry import register

QDRANT: Final = register(
    operator_endpoint(
        name="qdrant",
        label="Qdrant",
        role=Role.SERVICE,
        toolsets=("library",),
        url=Setting(
            "QDRANT_URL",
            "use this Qdrant server instead of the embedded passage index; a password in "
            "it is redacted",
            config_key="qdrant_url",
            required=True,
            redaction=Redaction.USERINFO,
            carrier=Carrier.USERINFO,
        ),
        extra=(
            Setting(
                "QDRANT_API_KEY",
                "API key for QDRANT_URL",
                redaction=Redaction.VALUE,
                carrier=Carrier.HEADER,
                carried_as="api-key",
            ),
        ),
    )
)

REDIS: Final = register(
    operator_endpoint(
        name="redis",
        label="Redis",
        role=Role.SERVICE,
        toolsets=("web",),
        url=Setting(
            "REDIS_URL",
            "shared web cache, artifacts and research sessions (values encrypted) "
            "instead of memory + disk; a password in it is redacted",
            config_key="redis_url",
            required=True,
            redaction=Redaction.USERINFO,
            carrier=Carrier.USERINFO,
        ),
    )
)
