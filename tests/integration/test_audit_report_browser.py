"""The audit's HTML report in the real Chromium: it renders, every link inside the page
lands on an element, nothing is fetched, markup from the draft never runs."""

from __future__ import annotations

from pathlib import Path

from browserutil import browser_or_skip

from auditfakes import HOSTILE, FakeChecker, FakeQuotes, FakeVerifier, problem_draft
from doiget.browserconfig import BrowserSettings
from doiget.claims.audit import audit
from doiget.claims.manuscripts.model import Citation, Cited, Place
from doiget.claims.report.page import as_html

PNG = b"\x89PNG\r\n\x1a\n"


async def _page() -> str:
    manuscript = problem_draft()
    manuscript.citations.append(
        Citation(Place("draft.tex", 40), f"Markup {HOSTILE}.", ("hostile",))
    )
    manuscript.bibliography["hostile"] = Cited(
        "hostile", f"@article{{hostile, title = {{{HOSTILE}}}, year = 2020}}"
    )
    report = await audit(manuscript, checker=FakeChecker(), verifier=FakeVerifier(),
                         quotes=FakeQuotes(), fetch=False)  # fmt: skip
    return as_html(report)


async def test_the_report_renders_offline_with_working_anchors(tmp_path: Path) -> None:
    browser_or_skip()
    from playwright.async_api import Route, async_playwright

    html = await _page()
    requested: list[str] = []

    async def refuse(route: Route) -> None:
        requested.append(route.request.url)
        await route.abort()

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(BrowserSettings().chromium()),
            headless=True,
            args=["--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"],
        )
        try:
            page = await browser.new_page(viewport={"width": 1000, "height": 800})
            await page.route("**/*", refuse)
            seen: list[str] = []
            page.on("request", lambda request: seen.append(request.url))
            await page.set_content(html, wait_until="load")

            assert await page.title() == "Citation audit of draft.tex"
            assert await page.locator("article.citation").count() == 11
            assert await page.locator("script, b, img").count() == 0
            markup = page.locator("#c11 blockquote")
            assert HOSTILE in (await markup.inner_text())
            assert await page.locator("#attention").is_visible()

            anchors = await page.eval_on_selector_all(
                'a[href^="#"]',
                "links => links.map(a => [a.getAttribute('href'), "
                "!!document.getElementById(a.getAttribute('href').slice(1))])",
            )
            assert len(anchors) >= 2 * 11
            assert [href for href, found in anchors if not found] == []

            # Following a contents link scrolls its citation to the top; its link back returns.
            await page.click('#contents a[href="#c10"]')
            top = await page.eval_on_selector("#c10", "e => e.getBoundingClientRect().top")
            assert abs(top) < 5
            await page.click('#c10 a[href="#toc-c10"]')
            back = await page.eval_on_selector("#toc-c10", "e => e.getBoundingClientRect().top")
            assert abs(back) < 5

            shot = tmp_path / "audit.png"
            await page.screenshot(path=str(shot), full_page=True)
            data = shot.read_bytes()
            assert data.startswith(PNG) and len(data) > 10_000
            assert requested == [] and [url for url in seen if not url.startswith("data:")] == []
        finally:
            await browser.close()
