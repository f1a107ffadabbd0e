"""The Zotero core a face holds: the configured library's API, its reader and its writer.

Built on the first call of a Zotero tool or command; the writer (with the papers core
and the verifier it needs) only when something is to be written.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Final

from doiget.errors import DoigetError, ErrorCode
from doiget.installed import ZOTERO_SETUP
from doiget.zotero.approval import Confirm
from doiget.zotero.browse import ZoteroBrowser
from doiget.zotero.contracts import Written, ZoteroAdd, ZoteroFound, ZoteroSearch

if TYPE_CHECKING:
    from doiget.runtime import Runtime
    from doiget.zotero.api import ZoteroApi
    from doiget.zotero.writeback import ZoteroWriter

NOT_CONFIGURED: Final = f"Zotero is not configured: it {ZOTERO_SETUP}, then restart doiget."


class ZoteroCore:
    """Zotero's reading and writing for one process."""

    def __init__(self, runtime: Runtime) -> None:
        from doiget.zotero.api import open_api

        if not runtime.settings.zotero.configured:
            raise DoigetError(ErrorCode.INVALID_CONFIG, NOT_CONFIGURED)
        api = open_api(runtime.settings, runtime.network())
        assert api is not None  # a library is configured
        self.api: ZoteroApi = api
        self.mode = runtime.settings.zotero.write
        self._runtime = runtime
        self.browser = ZoteroBrowser(api)

    @cached_property
    def writer(self) -> ZoteroWriter:
        from doiget.papers.service import Papers
        from doiget.verify.service import Verifier
        from doiget.zotero.writeback import ZoteroWriter

        papers = Papers(self._runtime)
        return ZoteroWriter(self.api, papers, Verifier.of(self._runtime), self.mode)

    async def search(self, request: ZoteroSearch) -> ZoteroFound:
        return await self.browser.search(request)

    async def add(self, request: ZoteroAdd, confirm: Confirm) -> Written:
        return await self.writer.add(request, confirm)

    async def aclose(self) -> None:
        """Close the writer's papers core if one was built (the network is the runtime's)."""
        if "writer" in self.__dict__:
            await self.writer.aclose()
        await self.api.aclose()
