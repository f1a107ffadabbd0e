"""Every request a rendered page makes, answered by doiget, never by the browser.

The browser gets no network of its own: each request of every frame and worker
reaches :meth:`PageGuard.handle` through Playwright's route interception, and is
either refused or fetched by doiget's ``web`` client, whose guard resolves the name
once, refuses any address that is not globally reachable, connects to the very
address it checked and checks every redirect hop again, and then handed to the
browser with :meth:`Route.fulfill`. The browser's own DNS is never asked. WebSockets
are refused; so is every navigation but the page itself (sub-frames, a script moving
the page elsewhere, downloads), and every kind of request text extraction does not
need (images, media, fonts, style sheets). A request that slipped past interception
would meet the launch's dead proxy (see :mod:`doiget.web.browser.tier`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final

from doiget.errors import DoigetError
from doiget.net.client import Fetched, SourceClient
from doiget.net.deadline import call_deadline
from doiget.net.redact import redact_url

if TYPE_CHECKING:
    from playwright.async_api import Route, WebSocketRoute

logger = logging.getLogger("doiget.web")

# The request kinds a page's text can depend on; the rest are refused unread.
FETCHED_KINDS: Final = frozenset({"script", "xhr", "fetch"})
FETCHED_METHODS: Final = frozenset({"GET", "HEAD", "POST"})
# Requests one page may have fetched for it, beside the page itself.
MAX_REQUESTS: Final = 64
# Bytes one page's requests may read in all, and one of them at most.
MAX_PAGE_BYTES: Final = 50 * 1024 * 1024
MAX_REQUEST_BYTES: Final = 10 * 1024 * 1024
# Request headers passed on from the browser; cookies and the like stay behind.
_FORWARDED: Final = ("accept", "accept-language", "content-type")
# Response headers handed to the browser: the body's type, CORS and the page's own
# script policy. Not cookies, not Content-Disposition (no downloads), not encodings
# (the body is already decoded).
_RETURNED: Final = (
    "content-type",
    "content-language",
    "content-security-policy",
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-expose-headers",
)
_ANSWERED_STATUSES: Final = range(400, 600)


def _in_main_frame(request: Any) -> bool:
    try:
        return request.frame.parent_frame is None
    except Exception:  # a worker's request has no frame
        return False


def _headers(headers: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    lowered = {name.lower(): value for name, value in headers.items()}
    return {name: lowered[name] for name in names if name in lowered}


class PageGuard:
    """The route handler of one page: what it fetched, refused, and still has running."""

    def __init__(self, client: SourceClient, document: Fetched, deadline: float) -> None:
        """``document`` is the page as doiget already read it; ``deadline`` is a
        ``time.monotonic()`` instant after which nothing more is fetched."""
        self._client = client
        self._document = document
        self._deadline = deadline
        self._document_served = False
        self._bytes = 0
        self._running: set[asyncio.Task[Any]] = set()
        self.fetched: list[str] = []
        self.refused: list[tuple[str, str]] = []
        # Set when the page tried to move its main frame elsewhere: as in any browser,
        # that stopped its loading, so there is nothing more to wait for.
        self.moved_away = asyncio.Event()

    # -- Playwright's handlers --------------------------------------------------------

    async def handle(self, route: Route) -> None:
        """Answer one intercepted request (never raises: a failure aborts it)."""
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            await self._answer(route)
        except Exception as exc:  # the page may be gone; the request must not hang
            logger.debug("browser request %s ended: %s", redact_url(route.request.url), exc)
            with suppress(Exception):
                await route.abort("failed")
        finally:
            if task is not None:
                self._running.discard(task)

    async def refuse_socket(self, socket: WebSocketRoute) -> None:
        """WebSockets are never opened: doiget cannot check what flows over them."""
        self._note_refusal(socket.url, "WebSocket")
        with suppress(Exception):
            await socket.close(code=1008, reason="refused by doiget")

    def cancel_pending(self) -> None:
        """Stop every fetch still running for this page (it is being closed)."""
        for task in list(self._running):
            task.cancel()

    # -- deciding ---------------------------------------------------------------------

    async def _answer(self, route: Route) -> None:
        request = route.request
        url = request.url
        if request.is_navigation_request():
            # The first navigation is the one doiget starts: the page itself.
            if not self._document_served:
                self._document_served = True
                await self._fulfill(route, self._document)
                return
            # Answered "204 No Content", which leaves the page where it is (an aborted
            # navigation would replace it with the browser's error page).
            self._note_refusal(url, "navigation away from the page (frame or download)")
            if _in_main_frame(request):
                self.moved_away.set()
            await route.fulfill(status=204, headers={}, body=b"")
            return
        kind = request.resource_type
        if kind not in FETCHED_KINDS:
            await self._refuse(route, url, f"{kind} not needed for text")
            return
        if request.method not in FETCHED_METHODS:
            await self._refuse(route, url, f"method {request.method}")
            return
        if len(self.fetched) >= MAX_REQUESTS:
            await self._refuse(route, url, f"more than {MAX_REQUESTS} requests")
            return
        left = self._deadline - time.monotonic()
        room = MAX_PAGE_BYTES - self._bytes
        if left <= 0 or room <= 0:
            await self._refuse(route, url, "page deadline or byte budget spent", "timedout")
            return
        self.fetched.append(redact_url(url))
        try:
            with call_deadline(left):
                fetched = await self._fetch(request.method, url, request.headers, request, room)
        except DoigetError as error:
            await self._refuse(route, url, error.message, "blockedbyclient")
            return
        self._bytes += len(fetched.content)
        await self._fulfill(route, fetched)

    async def _fetch(
        self, method: str, url: str, headers: Mapping[str, str], request: Any, room: int
    ) -> Fetched:
        """``url`` through the guarded client: the same checks as any page doiget reads."""
        forwarded = _headers(headers, _FORWARDED)
        if method == "POST":
            body = request.post_data_buffer or b""
            return await self._client.post(
                url, body, headers=forwarded, accept_status=_ANSWERED_STATUSES
            )
        return await self._client.get(
            url,
            headers=forwarded,
            max_bytes=min(room, MAX_REQUEST_BYTES),
            accept_status=_ANSWERED_STATUSES,
            timeouts=self._client.timeouts.page,
        )

    async def _fulfill(self, route: Route, fetched: Fetched) -> None:
        await route.fulfill(
            status=fetched.status,
            headers=_headers(fetched.headers, _RETURNED),
            body=fetched.content,
        )

    async def _refuse(
        self, route: Route, url: str, why: str, code: str = "blockedbyclient"
    ) -> None:
        self._note_refusal(url, why)
        await route.abort(code)

    def _note_refusal(self, url: str, why: str) -> None:
        shown = redact_url(url)
        self.refused.append((shown, why))
        logger.debug("browser request refused: %s (%s)", shown, why)
