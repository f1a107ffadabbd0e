"""Saving a new work into the open Zotero desktop library through its connector
endpoints (``/connector/saveItems``, ``saveAttachment``, ``updateSession``), as the
browser connector does."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.net.client import Fetched
from doiget.zotero.transport import ZoteroTransport, json_bytes


class ZoteroConnector(ZoteroTransport):
    """The desktop app's connector, for new works."""

    async def connector_save(
        self,
        item: Mapping[str, Any],
        *,
        collection: str | None,
        pdf_url: str | None,
        pdf: Path | None = None,
    ) -> None:
        """Save a new item into the open desktop library (``/connector/saveItems``,
        then ``/connector/updateSession`` to file it into the collection named
        ``collection``). ``pdf`` (a stored file) is attached with ``/connector/saveAttachment``,
        its source named by ``pdf_url``."""
        session = uuid.uuid4().hex
        target = await self._connector_target(collection) if collection else None
        connector_id = "doiget-1"
        saved = {**dict(item), "id": connector_id}
        await self._connector_post(
            "saveItems",
            json_bytes({"sessionID": session, "uri": pdf_url or "", "items": [saved]}),
            {"Content-Type": "application/json"},
        )
        if pdf is not None:
            metadata = {
                "sessionID": session,
                "parentItemID": connector_id,
                "title": "Full Text PDF",
                "url": pdf_url or "",
            }
            content = await anyio.Path(pdf).read_bytes()
            await self._connector_post(
                "saveAttachment",
                content,
                {"Content-Type": "application/pdf", "X-Metadata": json.dumps(metadata)},
            )
        if target is not None:
            await self._connector_post(
                "updateSession",
                json_bytes({"sessionID": session, "target": target}),
                {"Content-Type": "application/json"},
            )

    @property
    def _connector_root(self) -> str:
        """The desktop app's connector root; the Web API has none."""
        if self._connector is None:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"{self.library.label} is read through the Web API, which has no connector: "
                "set DOIGET_ZOTERO_LOCAL=1 (and unset DOIGET_ZOTERO_LIBRARY) to save works "
                "through the Zotero desktop app.",
            )
        return self._connector

    async def _connector_post(
        self, endpoint: str, body: bytes, headers: Mapping[str, str]
    ) -> Fetched:
        fetched = await self._send(
            "POST",
            f"{self._connector_root}/{endpoint}",
            headers=headers,
            body=body,
            what="save a work into",
        )
        if fetched.status == 200 and endpoint == "saveAttachment":
            # The app answers 200 (not 201) when the selected library's files are read-only.
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                "the Zotero desktop app saved the work but not its PDF: the library selected "
                "in Zotero does not allow files. Select My Library in Zotero and try again.",
            )
        return fetched

    async def _connector_target(self, collection: str) -> str:
        """The connector's id (``C<n>``) of the collection named ``collection`` (the
        connector knows collections by name and its own ids, not by key)."""
        fetched = await self._connector_post(
            "getSelectedCollection", b"{}", {"Content-Type": "application/json"}
        )
        targets = self._object(fetched).get("targets")
        if not isinstance(targets, list):
            raise self._client.schema_drift("listed no save targets")
        for target in targets:
            if not isinstance(target, dict) or not str(target.get("id", "")).startswith("C"):
                continue
            if target.get("name") == collection:
                return str(target["id"])
        names = sorted(
            str(t.get("name")) for t in targets if isinstance(t, dict) and t.get("level")
        )
        raise DoigetError(
            ErrorCode.NOT_FOUND,
            f"the Zotero desktop app has no collection named {collection!r}; nothing was "
            f"saved. Name one of: {', '.join(names) or '(none)'}, or create it in Zotero.",
        )
