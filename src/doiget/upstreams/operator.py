"""Services the operator runs for doiget (a Qdrant server, a Redis instance).

They are reached through their own client libraries, not doiget's network, but their
credentials are declared here so redaction and the settings table know them.
"""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import (
    Carrier,
    Gate,
    Redaction,
    Role,
    Scheme,
    Setting,
    Upstream,
)
from doiget.upstreams.registry import register

QDRANT: Final = register(
    Upstream(
        name="qdrant",
        label="Qdrant",
        role=Role.SERVICE,
        hosts=(),
        min_gap_s=0.0,
        toolsets=("library",),
        gate=Gate.CONFIGURED,
        scheme=Scheme.ENDPOINT,
        endpoint="QDRANT_URL",
        settings=(
            Setting(
                "QDRANT_URL",
                "use this Qdrant server instead of the embedded passage index",
                config_key="qdrant_url",
                required=True,
            ),
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
    Upstream(
        name="redis",
        label="Redis",
        role=Role.SERVICE,
        hosts=(),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        scheme=Scheme.ENDPOINT,
        endpoint="REDIS_URL",
        settings=(
            Setting(
                "REDIS_URL",
                "shared web cache, artifacts and research sessions (values encrypted) "
                "instead of memory + disk; a password in it is redacted",
                config_key="redis_url",
                required=True,
                redaction=Redaction.USERINFO,
                carrier=Carrier.USERINFO,
            ),
        ),
    )
)
