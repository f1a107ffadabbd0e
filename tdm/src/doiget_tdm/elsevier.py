"""Elsevier's Article Retrieval API, under the user's TDM grant.

The key travels in the ``X-ELS-APIKey`` header. Elsevier answers a key that is not
entitled to an article with a first-page preview rather than an error, so the
Article Entitlement API is asked first: a ``false`` there is a denial, and nothing is
downloaded. The PDF itself must then start with ``%PDF-``; an XML or HTML answer is
refused like any other non-PDF.
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

API: Final = "https://api.elsevier.com/content/article"


def _entitled(document: Any) -> tuple[bool, str]:
    """``(entitled, message)`` from an Article Entitlement answer."""
    answer = document.get("entitlement-response") if isinstance(document, dict) else None
    entry = answer.get("document-entitlement") if isinstance(answer, dict) else None
    if isinstance(entry, list):
        entry = entry[0] if entry else None
    if not isinstance(entry, dict) or "entitled" not in entry:
        raise ValueError("no document-entitlement.entitled")
    flag = entry["entitled"]
    entitled = flag is True or str(flag).lower() == "true"
    return entitled, str(entry.get("message") or "")


class ElsevierTdm:
    """The Elsevier TDM source."""

    publisher = "elsevier"

    @asynccontextmanager
    async def download(
        self, doi: str, grant: TdmGrant, client: SourceClient, dest_dir: Path
    ) -> AsyncIterator[DownloadedPdf]:
        """The article's PDF, after Elsevier confirmed the key is entitled to it."""
        key = {"X-ELS-APIKey": key_of(grant, self.publisher)}
        path = quote(doi, safe="/")
        with key_refusals(self.publisher, doi, "Elsevier"):
            document = await client.get_json(f"{API}/entitlement/doi/{path}", headers=key)
        try:
            entitled, message = _entitled(document)
        except ValueError:
            raise client.schema_drift("answered an entitlement request without one") from None
        if not entitled:
            why = f"Elsevier says the key is not entitled ({message or 'no reason given'})"
            raise not_entitled(self.publisher, doi, why)
        headers = {**key, "Accept": "application/pdf"}
        with key_refusals(self.publisher, doi, "Elsevier"):
            async with client.download_pdf(
                f"{API}/doi/{path}", dest_dir, headers=headers, from_upstream=False
            ) as pdf:
                yield pdf


SOURCE: Final = ElsevierTdm()
