"""Zotero: the Web API for one library with a key, or the desktop app's local API
(client: :mod:`doiget.zotero.api`; settings checked in :mod:`doiget.zoteroconfig`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import (
    Carrier,
    Gate,
    Role,
    Setting,
    Upstream,
    api_credential,
    operator_endpoint,
)
from doiget.upstreams.registry import register

# Downloads of attachment files are redirected to FILES_HOST; uploads go to UPLOAD_HOST.
# Neither ever receives the key: it is a header for API_HOST only.
API_HOST: Final = "api.zotero.org"
FILES_HOST: Final = "files.zotero.net"
UPLOAD_HOST: Final = "zoterofilestorage.s3.amazonaws.com"
KEY_HEADER: Final = "Zotero-API-Key"

WEB: Final = register(
    Upstream(
        name="zotero",
        label="Zotero Web API",
        role=Role.SERVICE,
        hosts=(API_HOST, FILES_HOST, UPLOAD_HOST),
        # Zotero publishes no ceiling; it asks clients to slow down with Backoff and 429.
        min_gap_s=0.1,
        toolsets=("zotero",),
        gate=Gate.CONFIGURED,
        settings=(
            Setting(
                "DOIGET_ZOTERO_LIBRARY",
                "the Zotero library doiget reads through the Web API: users/<user ID> or "
                "groups/<group ID> (needs DOIGET_ZOTERO_API_KEY; not with DOIGET_ZOTERO_LOCAL)",
                config_key="zotero_library",
                required=True,
            ),
            api_credential(
                "DOIGET_ZOTERO_API_KEY",
                "Zotero API key for DOIGET_ZOTERO_LIBRARY (write access lets doiget add works "
                "when DOIGET_ZOTERO_WRITE allows); sent to api.zotero.org only",
                carrier=Carrier.HEADER,
                carried_as=KEY_HEADER,
            ),
            Setting(
                "DOIGET_ZOTERO_WRITE",
                "whether doiget writes to the Zotero library: off (default), ask (each write "
                "approved by the user) or on",
                config_key="zotero_write",
            ),
        ),
    )
)

LOCAL: Final = register(
    operator_endpoint(
        name="zotero_local",
        label="Zotero desktop app",
        role=Role.SERVICE,
        toolsets=("zotero",),
        url=Setting(
            "DOIGET_ZOTERO_LOCAL",
            "=1 reads the Zotero desktop app's library through its local API (Zotero 7+, "
            "enabled in its settings) and adds works through its connector; or "
            "http://127.0.0.1:<port> for another port (not with DOIGET_ZOTERO_LIBRARY)",
            config_key="zotero_local",
            required=True,
        ),
        # The local API and the connector; the app's other endpoints (its word processor
        # integration, debug output ...) are never requested.
        paths=("/api/", "/connector/"),
    )
)
