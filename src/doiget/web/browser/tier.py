"""One headless Chromium per process, started on first use and closed when idle.

Each page is rendered in a fresh browser context (no cookies, storage or cache
shared with another page, no persistent profile), with downloads, service workers
and permissions off, under a deadline, and at most ``DOIGET_BROWSER_PAGES`` at once.
Every request the page makes is answered by :class:`~doiget.web.browser.guard.PageGuard`.

Beneath interception the browser is launched with no usable network: its proxy is a
loopback port doiget holds bound but never listens on (also for loopback targets,
which Chromium otherwise sends direct), QUIC is off and WebRTC may not use UDP
outside the proxy. A request interception missed therefore fails to connect.

Playwright is imported here only, on first use: a server that never renders a page
never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

import anyio

from doiget.browserconfig import BrowserSettings
from doiget.errors import DoigetError
from doiget.installed import BrowserState, browser_state
from doiget.net.client import Fetched, SourceClient
from doiget.net.deadline import time_left
from doiget.net.deadport import DeadPort
from doiget.web.browser.guard import PageGuard
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

logger = logging.getLogger("doiget.web")

T = TypeVar("T")
# Seconds of a page's deadline kept for reading its rendered HTML.
READ_RESERVE: Final = 2.0
# Seconds a page's context gets to close before the whole browser is restarted.
CLOSE_GRACE: Final = 5.0
# Seconds a page that tried to move elsewhere gets to finish the script that was running.
MOVE_SETTLE: Final = 0.5
# Rendered HTML beyond this many bytes is cut, as a fetched page would be.
MAX_HTML_BYTES: Final = 50 * 1024 * 1024
_LAUNCH_ARGS: Final = (
    "--proxy-bypass-list=<-loopback>",
    "--disable-quic",
    "--dns-prefetch-disable",
    "--no-pings",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)


@dataclass(frozen=True, slots=True)
class Rendered:
    """A page as the browser left it: its HTML and what the guard did for it."""

    html: str
    url: str
    fetched: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    seconds: float


def _in_fresh_context(work: Callable[[], Awaitable[T]]) -> asyncio.Task[T]:
    """``work()`` as a task outside the caller's context variables.

    Playwright's own tasks (and so the route handlers) inherit the context of the
    call that started it; started from inside one scrape, they would carry that
    call's deadline into every later page.
    """
    loop = asyncio.get_running_loop()

    async def run() -> T:
        return await work()

    return loop.create_task(run(), context=contextvars.Context())


class BrowserTier:
    """The browser tier of one process (owned by the web core)."""

    def __init__(self, settings: BrowserSettings) -> None:
        self._settings = settings
        self.state: BrowserState = browser_state(settings)
        self._places = anyio.Semaphore(settings.pages)
        self._start_lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._dead_proxy: DeadPort | None = None
        self._active = 0
        self._last_used = 0.0
        self._idle_watch: asyncio.Task[None] | None = None
        self.launches = 0

    @property
    def running(self) -> bool:
        """Whether a browser process is up now."""
        return self._browser is not None

    async def render(self, document: Fetched, client: SourceClient) -> Rendered:
        """``document`` rendered with its scripts run, every request through ``client``.

        Raises a web error of kind timeout when the page does not give up its HTML
        within the deadline, upstream when the browser fails.
        """
        started = time.monotonic()
        seconds = self._settings.deadline
        left = time_left()
        if left is not None:
            seconds = min(seconds, left)
        deadline = started + seconds
        if seconds <= READ_RESERVE:
            raise self._timeout(document.url, seconds)
        try:
            with anyio.fail_after(seconds):
                await self._places.acquire()
        except TimeoutError:
            raise self._timeout(document.url, seconds) from None
        try:
            browser = await self._browser_up()
            self._active += 1
            try:
                return await self._render(browser, document, client, deadline, started)
            finally:
                self._active -= 1
                self._last_used = time.monotonic()
        finally:
            self._places.release()

    async def aclose(self) -> None:
        """Close the browser (and stop watching for idleness)."""
        if self._idle_watch is not None:
            self._idle_watch.cancel()
            self._idle_watch = None
        await self._shut()

    # -- one page ---------------------------------------------------------------------

    async def _render(
        self,
        browser: Browser,
        document: Fetched,
        client: SourceClient,
        deadline: float,
        started: float,
    ) -> Rendered:
        from playwright.async_api import Error as PlaywrightError

        guard = PageGuard(client, document, deadline)
        context: BrowserContext | None = None
        try:
            with anyio.fail_after(max(deadline - time.monotonic(), 0.1)):
                context = await self._new_context(browser, guard)
                html, url = await self._load(context, guard, document.url, deadline)
        except TimeoutError:
            raise self._timeout(document.url, deadline - started) from None
        except PlaywrightError as exc:
            if "Timeout" in type(exc).__name__:
                raise self._timeout(document.url, deadline - started) from None
            raise self._failed(document.url, exc.message) from None
        finally:
            guard.cancel_pending()
            if context is not None:
                await self._close_context(context)
        if not url.startswith(("http://", "https://")):
            raise self._failed(document.url, f"the page ended on {url}")
        return Rendered(
            html=_capped(html),
            url=url,
            fetched=tuple(guard.fetched),
            refused=tuple(guard.refused),
            seconds=time.monotonic() - started,
        )

    async def _new_context(self, browser: Browser, guard: PageGuard) -> BrowserContext:
        context = await browser.new_context(
            accept_downloads=False,
            service_workers="block",
            java_script_enabled=True,
            permissions=[],
        )
        await context.route("**/*", guard.handle)
        await context.route_web_socket("**/*", guard.refuse_socket)
        return context

    async def _load(
        self, context: BrowserContext, guard: PageGuard, url: str, deadline: float
    ) -> tuple[str, str]:
        """Open ``url``, let its scripts run until the network is quiet, the page tries
        to move elsewhere, or the deadline (less the read reserve) comes; then read the
        DOM as it stands."""
        page = await context.new_page()
        await page.goto(url, wait_until="commit", timeout=_ms(deadline - READ_RESERVE))
        settled = asyncio.ensure_future(_settled(page, url, deadline - READ_RESERVE))
        moved = asyncio.ensure_future(guard.moved_away.wait())
        try:
            done, _ = await asyncio.wait({settled, moved}, return_when=asyncio.FIRST_COMPLETED)
            if moved in done and settled not in done:
                logger.info("browser: %s tried to leave the page; read as it is", url)
                await asyncio.sleep(
                    min(MOVE_SETTLE, max(deadline - READ_RESERVE - time.monotonic(), 0))
                )
        finally:
            for waiting in (settled, moved):
                waiting.cancel()
        return await _current_html(context, page), page.url

    async def _close_context(self, context: BrowserContext) -> None:
        """Close a page's context; a browser that cannot is restarted on next use."""
        closed = False
        with anyio.move_on_after(CLOSE_GRACE, shield=True):
            try:
                await context.close()
                closed = True
            except Exception as exc:  # a crashed browser cannot close its contexts
                logger.info("browser context did not close: %s", exc)
        if not closed:
            with anyio.CancelScope(shield=True):
                await self._shut()

    def _failed(self, url: str, why: str) -> DoigetError:
        first_line = (why.strip().splitlines() or ["no reason given"])[0]
        return web_error(Kind.UPSTREAM, f"The browser could not render {url}: {first_line}")

    def _timeout(self, url: str, seconds: float) -> DoigetError:
        return web_error(
            Kind.TIMEOUT,
            f"{url} did not finish rendering in the browser within {seconds:.0f} s "
            "(DOIGET_BROWSER_DEADLINE).",
        )

    # -- the process ------------------------------------------------------------------

    async def _browser_up(self) -> Browser:
        async with self._start_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            await self._shut()
            self._browser = await _in_fresh_context(self._launch)
            self._last_used = time.monotonic()
            self.launches += 1
            if self._idle_watch is None or self._idle_watch.done():
                self._idle_watch = _in_fresh_context(self._close_when_idle)
            return self._browser

    async def _launch(self) -> Browser:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = self.state.executable
        dead = DeadPort()
        self._dead_proxy = dead
        started = time.monotonic()
        try:
            playwright = await async_playwright().start()
            self._playwright = playwright
            browser = await playwright.chromium.launch(
                executable_path=str(executable),
                headless=True,
                args=[f"--proxy-server={dead.proxy_url}", *_LAUNCH_ARGS],
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )
        except (PlaywrightError, OSError) as exc:
            await self._shut()
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise web_error(
                Kind.INTERNAL,
                f"The browser tier could not start {executable}: {first_line}",
                suggested_action="Check DOIGET_BROWSER_PATH names a working Chromium, or set "
                "DOIGET_BROWSER=off.",
            ) from None
        logger.info("browser started (%s) in %.2f s", executable, time.monotonic() - started)
        return browser

    async def _close_when_idle(self) -> None:
        idle = self._settings.idle
        while self._browser is not None:
            wait = self._last_used + idle - time.monotonic()
            if self._active == 0 and wait <= 0:
                async with self._start_lock:
                    if self._active == 0 and self._browser is not None:
                        logger.info("browser idle for %.0f s: closed", idle)
                        await self._shut()
                continue
            await asyncio.sleep(max(wait, min(idle, 1.0)))

    async def _shut(self) -> None:
        browser, playwright, dead = self._browser, self._playwright, self._dead_proxy
        self._browser = self._playwright = self._dead_proxy = None
        for step in (browser.close if browser else None, playwright.stop if playwright else None):
            if step is None:
                continue
            try:
                await step()
            except Exception as exc:  # already gone
                logger.debug("browser shutdown step failed: %s", exc)
        if dead is not None:
            dead.close()


async def _settled(page: Page, url: str, deadline: float) -> None:
    """Wait for the DOM, then for a quiet network, as long as ``deadline`` allows."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    for state in ("domcontentloaded", "networkidle"):
        try:
            await page.wait_for_load_state(state, timeout=_ms(deadline))
        except PlaywrightTimeout:
            logger.info("browser: %s not %s by its deadline; read as it is", url, state)
            return


async def _current_html(context: BrowserContext, page: Page) -> str:
    """The page's DOM serialised as it stands, read through the DevTools protocol.

    Unlike ``page.content()`` this does not wait for a navigation the page started
    (and the guard refused) to settle: a script that moves the page elsewhere while
    it loads leaves it as it was, and that is what is read.
    """
    session = await context.new_cdp_session(page)
    try:
        document = await session.send("DOM.getDocument", {"depth": 0})
        answer = await session.send("DOM.getOuterHTML", {"nodeId": document["root"]["nodeId"]})
        return str(answer["outerHTML"])
    finally:
        with contextlib.suppress(Exception):
            await session.detach()


def _ms(deadline: float) -> float:
    """Milliseconds from now until ``deadline`` (at least 1)."""
    return max((deadline - time.monotonic()) * 1000, 1.0)


def _capped(html: str) -> str:
    data = html.encode("utf-8", "replace")
    if len(data) <= MAX_HTML_BYTES:
        return html
    return data[:MAX_HTML_BYTES].decode("utf-8", "ignore")
