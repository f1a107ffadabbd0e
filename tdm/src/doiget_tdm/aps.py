"""The APS Harvest API, under the user's TDM grant.

``GET https://harvest.aps.org/v2/journals/articles/{doi}`` with the key as a bearer
token and ``Accept: application/pdf``. A 401/403 is the key's entitlement ending; a
body that is not a PDF is refused and nothing is kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final
from urllib.parse import quote

from doiget.capability import TdmGrant
from doiget.net.client import DownloadedPdf, SourceClient
from doiget_tdm.grant import key_of, key_refusals

API: Final = "https://harvest.aps.org/v2/journals/articles"


class ApsTdm:
    """The APS Harvest TDM source."""

    publisher = "aps"

    @asynccontextmanager
    async def download(
        self, doi: str, grant: TdmGrant, client: SourceClient, dest_dir: Path
    ) -> AsyncIterator[DownloadedPdf]:
        """The article's PDF from APS Harvest."""
        headers = {
            "Authorization": f"Bearer {key_of(grant, self.publisher)}",
            "Accept": "application/pdf",
        }
        url = f"{API}/{quote(doi, safe='/')}"
        with key_refusals(self.publisher, doi, "APS Harvest"):
            async with client.download_pdf(
                url, dest_dir, headers=headers, from_upstream=False
            ) as pdf:
                yield pdf


SOURCE: Final = ApsTdm()
