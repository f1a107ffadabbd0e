"""Springer Nature's Open Access API, under the user's TDM grant.

``GET https://api.springernature.com/openaccess/json?q=doi:{doi}&api_key=<key>``
confirms the article is open and names its PDF; the PDF then comes from
``link.springer.com``. The key travels as a query parameter, so every URL that
carries it is redacted (the ``api_key`` parameter is declared a credential) before
any log, error or provenance row, and the PDF request carries no key at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from doiget.capability import TdmGrant
from doiget.net.client import DownloadedPdf, SourceClient
from doiget_tdm.grant import key_of, key_refusals, not_entitled

API: Final = "https://api.springernature.com/openaccess/json"
PDF_HOST: Final = "link.springer.com"


def _record(document: Any, doi: str) -> dict[str, Any] | None:
    """The answer's record for ``doi`` (None when it lists none)."""
    records = document.get("records") if isinstance(document, dict) else None
    if not isinstance(records, list):
        raise ValueError("no records list")
    for record in records:
        if not isinstance(record, dict):
            continue
        identifier = str(record.get("identifier") or record.get("doi") or "").lower()
        if identifier.removeprefix("doi:") == doi.lower():
            return record
    return None


def _pdf_url(record: dict[str, Any], doi: str) -> str:
    """The record's PDF link on SpringerLink, else SpringerLink's own PDF path."""
    for link in record.get("url") or []:
        if isinstance(link, dict) and str(link.get("format", "")).lower() == "pdf":
            value = str(link.get("value") or "")
            if PDF_HOST in value:
                return value
    return f"https://{PDF_HOST}/content/pdf/{quote(doi, safe='/')}.pdf"


class SpringerTdm:
    """The Springer Nature TDM source (Open Access API, then SpringerLink)."""

    publisher = "springer"

    @asynccontextmanager
    async def download(
        self, doi: str, grant: TdmGrant, client: SourceClient, dest_dir: Path
    ) -> AsyncIterator[DownloadedPdf]:
        """The article's PDF, once Springer Nature's Open Access API lists it as open."""
        params = {"q": f"doi:{doi}", "api_key": key_of(grant, self.publisher)}
        with key_refusals(self.publisher, doi, "Springer Nature"):
            document = await client.get_json(API, params=params)
        try:
            record = _record(document, doi)
        except ValueError:
            raise client.schema_drift("answered an Open Access query without records") from None
        if record is None:
            raise not_entitled(
                self.publisher, doi, "Springer Nature's Open Access API does not list it"
            )
        if str(record.get("openaccess", "")).lower() != "true":
            raise not_entitled(self.publisher, doi, "Springer Nature marks it as not open access")
        url = _pdf_url(record, doi)
        async with client.download_pdf(url, dest_dir, headers={"Accept": "application/pdf"}) as pdf:
            yield pdf


SOURCE: Final = SpringerTdm()
