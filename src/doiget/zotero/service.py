"""The Zotero core a face holds: the configured library's API, its reader and its writer.

Built on the first call of a Zotero tool or command; the writer and the sync (with the
papers core, the verifier and the library they need) only when first used.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from doiget.zotero.approval import Confirm
from doiget.zotero.browse import ZoteroBrowser
from doiget.zotero.contracts import Written, ZoteroAdd, ZoteroFound, ZoteroSearch

if TYPE_CHECKING:
    from doiget.library.service import Library
    from doiget.papers.service import Papers
    from doiget.runtime import Runtime
    from doiget.verify.service import Verifier
    from doiget.zotero.api import ZoteroApi
    from doiget.zotero.sync import ZoteroSync
    from doiget.zotero.writeback import ZoteroWriter


class ZoteroCore:
    """Zotero's reading and writing for one process."""

    def __init__(self, runtime: Runtime) -> None:
        from doiget.zotero.api import open_api

        api = open_api(runtime.settings, runtime.network())
        self.api: ZoteroApi = api
        self.mode = runtime.settings.zotero.write
        self._runtime = runtime
        self.browser = ZoteroBrowser(api, runtime.settings.data_dir)

    @cached_property
    def _papers(self) -> Papers:
        from doiget.papers.service import Papers

        return Papers(self._runtime)

    @cached_property
    def _verifier(self) -> Verifier:
        from doiget.verify.service import Verifier

        return Verifier.of(self._runtime)

    @cached_property
    def _library(self) -> Library:
        from doiget.library.service import Library

        return Library(self._runtime.settings)

    @cached_property
    def writer(self) -> ZoteroWriter:
        from doiget.zotero.writeback import ZoteroWriter

        return ZoteroWriter(self.api, self._papers, self._verifier, self.mode)

    @cached_property
    def sync(self) -> ZoteroSync:
        """The library's incremental sync into doiget's store and passage index."""
        from doiget.zotero.sync import ZoteroSync

        return ZoteroSync(self.api, self._papers, self._verifier, library=self._library)

    async def search(self, request: ZoteroSearch) -> ZoteroFound:
        return await self.browser.search(request)

    async def add(self, request: ZoteroAdd, confirm: Confirm) -> Written:
        return await self.writer.add(request, confirm)

    async def aclose(self) -> None:
        """Close what the writer and the sync were built on (the network is the runtime's)."""
        built = self.__dict__
        if "_library" in built:
            await self._library.aclose()
        if "_verifier" in built:
            await self._verifier.aclose()
        if "_papers" in built:
            await self._papers.aclose()
        await self.api.aclose()
