"""A Zotero attachment's file: its path in the desktop app's storage, or downloaded
through the Web API; and a PDF uploaded as a new attachment (upload authorisation,
upload to the file host without the key, registration)."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlencode, urlsplit
from urllib.request import url2pathname

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.net.client import Fetched
from doiget.zotero.models import AttachmentFile, ZoteroItem
from doiget.zotero.transport import path_key
from doiget.zotero.writing import ZoteroWrites


class ZoteroFiles(ZoteroWrites):
    """Attachment files of one library, read and uploaded."""

    async def attachment_file(self, attachment: ZoteroItem, into: Path) -> AttachmentFile:
        """The attachment's file: its path in the local app's storage, or downloaded
        through the Web API into a temp file under ``into``."""
        data = attachment.data
        content_type = str(data.get("contentType") or "")
        filename = str(data.get("filename") or "")

        def missing(why: str) -> AttachmentFile:
            return AttachmentFile(attachment.key, content_type, filename, missing=why)

        link_mode = str(data.get("linkMode") or "")
        if attachment.item_type != "attachment" or link_mode == "linked_url":
            return missing("it is a link to a web page, not a stored file")
        if self.library.local:
            return await self._local_file(attachment, content_type, filename)
        if link_mode == "linked_file":
            return missing(
                "it is a linked file on the researcher's computer, which the Web API does not "
                "hold; read it through the desktop app (DOIGET_ZOTERO_LOCAL)"
            )
        if content_type != "application/pdf":
            return missing(f"it is {content_type or 'a file of unknown type'}; doiget reads PDFs")
        url = self._library_url(f"/items/{path_key(attachment.key)}/file")
        try:
            async with self._client.download_pdf(
                url, into, from_upstream=False, headers=self._headers(url)
            ) as downloaded:
                kept = into / f".zotero-{attachment.key}-{uuid.uuid4().hex}.pdf"
                downloaded.path.replace(kept)
        except DoigetError as exc:
            if exc.code is ErrorCode.NOT_FOUND:
                return missing(
                    "Zotero holds no file for it (never synced to Zotero's storage, or kept "
                    "in WebDAV storage doiget cannot reach)"
                )
            raise
        return AttachmentFile(attachment.key, content_type, filename, path=str(kept))

    async def upload_attachment(self, parent: str, pdf: Path, *, filename: str, title: str) -> str:
        """A stored PDF as an imported-file attachment of ``parent`` (the Web API's
        upload authorisation, upload and registration); returns the attachment key."""
        self._writable("add a file to")
        stat, md5 = await anyio.to_thread.run_sync(_file_facts, pdf)
        template = {
            "itemType": "attachment",
            "parentItem": path_key(parent),
            "linkMode": "imported_file",
            "title": title,
            "contentType": "application/pdf",
            "charset": "",
            "filename": filename,
            "tags": [],
            "relations": {},
        }
        created = await self.create_items([template])
        if 0 not in created.created:
            why = created.failed.get(0, "Zotero did not say why")
            raise self._write_refused(f"the attachment was not created: {why}")
        key = created.created[0]
        file_url = self._library_url(f"/items/{key}/file")
        form = {
            "md5": md5,
            "filename": filename,
            "filesize": str(stat.st_size),
            "mtime": str(int(stat.st_mtime * 1000)),
        }
        authorised = self._object(await self._file_step(file_url, form))
        if authorised.get("exists") == 1:
            return key
        upload = {name: authorised.get(name) for name in ("url", "prefix", "suffix", "uploadKey")}
        if not all(isinstance(value, str) for value in upload.values()):
            raise self._client.schema_drift("authorised an upload without its url and keys")
        content = await anyio.Path(pdf).read_bytes()
        body = str(upload["prefix"]).encode() + content + str(upload["suffix"]).encode()
        await self._send(
            "POST",
            str(upload["url"]),
            headers={"Content-Type": str(authorised.get("contentType") or "")},
            body=body,
            what="upload a file to",
        )
        await self._file_step(file_url, {"upload": str(upload["uploadKey"])})
        return key

    async def _file_step(self, url: str, form: Mapping[str, str]) -> Fetched:
        return await self._send(
            "POST",
            url,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "If-None-Match": "*",
            },
            body=urlencode(form).encode(),
            what="add a file to",
        )

    async def _local_file(
        self, attachment: ZoteroItem, content_type: str, filename: str
    ) -> AttachmentFile:
        url = self._library_url(f"/items/{path_key(attachment.key)}/file/view/url")
        fetched = await self._send("GET", url, what="read")
        location = fetched.text.strip()
        parts = urlsplit(location)
        if parts.scheme != "file":
            raise self._client.schema_drift("named an attachment's file with a non-file URL")
        path = Path(url2pathname(unquote(parts.path)))
        if not await anyio.Path(path).is_file():
            return AttachmentFile(
                attachment.key,
                content_type,
                filename,
                missing=(
                    f"its file is not at {path} (Zotero shows it as missing: sync the "
                    "library or relink the file in Zotero)"
                ),
            )
        return AttachmentFile(attachment.key, content_type, filename, path=str(path))


def _file_facts(path: Path) -> tuple[os.stat_result, str]:
    """The file's size and times, and its MD5 (what Zotero's upload authorisation asks)."""
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return path.stat(), digest.hexdigest()
