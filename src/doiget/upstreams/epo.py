"""EPO Open Patent Services (client: :mod:`doiget.web.patents.epo`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, api_credential, keyed_web_api
from doiget.upstreams.registry import register

KEY_VAR: Final = "EPO_OPS_KEY"
SECRET_VAR: Final = "EPO_OPS_SECRET"  # noqa: S105  # a variable name

UPSTREAM: Final = register(
    keyed_web_api(
        name="epo",
        label="EPO Open Patent Services",
        role=Role.PATENT_SEARCH,
        host="ops.epo.org",
        settings=(
            api_credential(
                KEY_VAR,
                "EPO Open Patent Services consumer key for patent_search (needs EPO_OPS_SECRET)",
                carried_as="Authorization",
            ),
            api_credential(
                SECRET_VAR,
                "EPO Open Patent Services consumer secret (needs EPO_OPS_KEY)",
                carried_as="Authorization",
            ),
        ),
        factory="doiget.web.patents.epo:build",
        preference=2,
    )
)
