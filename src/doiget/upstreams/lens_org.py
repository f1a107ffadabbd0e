"""Lens.org patent API (client: :mod:`doiget.web.patents.lens`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, api_credential, keyed_web_api
from doiget.upstreams.registry import register

KEY_VAR: Final = "LENS_API_TOKEN"

UPSTREAM: Final = register(
    keyed_web_api(
        name="lens",
        label="Lens.org",
        role=Role.PATENT_SEARCH,
        host="api.lens.org",
        settings=(
            api_credential(
                KEY_VAR, "Lens.org patent API token (patent_search)", carried_as="Authorization"
            ),
        ),
        factory="doiget.web.patents.lens:build",
        # Tried first: it honours every filter of the tool as asked.
        preference=1,
    )
)
