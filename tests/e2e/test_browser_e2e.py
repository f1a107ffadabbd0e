"""The browser tier as agents and people reach it: scrape_page over MCP renders a
script-built page, the browser loads only when a page needs it, and capabilities and
health say whether the tier is there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from browserutil import ARTICLE, browser_or_skip, serve_app
from mcputil import mcp_session

from cliutil import doiget
from replay import ReplayUpstream, Reply

HOST = "blog.example.org"
PROSE = (
    "<html><head><title>Plain page</title></head><body><article><h1>Plain page</h1>"
    + "".join(f"<p>Sentence {n} of a page the server wrote in full.</p>" for n in range(40))
    + "</article></body></html>"
).encode()


def _watch_imports(env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    """``env`` for a server that writes to a file when it first imports Playwright's
    API (``playwright`` itself is only looked up, never imported, to report the tier)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    marker = tmp_path / "playwright-imported"
    (shim / "sitecustomize.py").write_text(
        "import sys, importlib.abc\n"
        "class Watch(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'playwright.async_api':\n"
        f"            open({str(marker)!r}, 'w').close()\n"
        "        return None\n"
        "sys.meta_path.insert(0, Watch())\n"
    )
    return {**env, "PYTHONPATH": str(shim), "DOIGET_WEB_CACHE": "0"}, marker


async def test_scrape_page_over_mcp_loads_the_browser_only_for_a_script_built_page(
    doiget_env: dict[str, str], upstream: ReplayUpstream, tmp_path: Path
) -> None:
    browser_or_skip()
    env, marker = _watch_imports(doiget_env, tmp_path)
    upstream.route(HOST, "/plain", Reply(200, PROSE, {"Content-Type": "text/html"}))
    url = serve_app(upstream, HOST, "/app")
    async with mcp_session(env, toolsets="web") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        plain = await session.call_tool("scrape_page", {"url": f"https://{HOST}/plain"})
        loaded_for_plain = marker.exists()
        rendered = await session.call_tool("scrape_page", {"url": url})
    assert "scrape_page" in names
    assert not loaded_for_plain  # start, tools/list and a plain page: no browser code
    assert plain.structured_content and plain.structured_content["extractedBy"] == "html"
    body = rendered.structured_content
    assert body and not rendered.is_error, body
    assert body["extractedBy"] == "browser"
    assert ARTICLE["title"] in body["content"]
    assert marker.exists()


def test_capabilities_and_health_report_the_tier(doiget_env: dict[str, str]) -> None:
    wide = {**doiget_env, "COLUMNS": "400"}
    off = {**wide, "DOIGET_BROWSER": "off"}
    shown = " ".join(doiget("capabilities", env=off).stdout.split())
    assert "scrape_page browser tier" in shown
    assert "unavailable: turned off by DOIGET_BROWSER=off" in shown
    report = json.loads(doiget("health", "--json", env=off).stdout)
    assert report["browser_tier"] == "unavailable: turned off by DOIGET_BROWSER=off"
    missing = {**wide, "PATH": str(Path(sys.executable).parent)}  # no chromium on it
    report = json.loads(doiget("health", "--json", env=missing).stdout)
    assert report["browser_tier"].startswith("unavailable:")
    assert "apt-get install chromium" in report["browser_tier"]
