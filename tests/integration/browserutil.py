"""Helpers for the browser tier's tests: the real Chromium, pages built by script."""

from __future__ import annotations

import json
import os

import pytest

from doiget.browserconfig import BrowserSettings
from doiget.installed import browser_state

from replay import ReplayUpstream, Reply

HTML = {"Content-Type": "text/html; charset=utf-8"}
JS = {"Content-Type": "text/javascript"}
JSON = {"Content-Type": "application/json"}

ARTICLE = {
    "title": "Glacier retreat measured by repeat photography",
    "paras": [
        f"Paragraph {n}: repeat photographs of the same valley, taken decades apart, show how "
        "far the ice front moved and how the moraine below it was laid bare."
        for n in range(12)
    ],
}

# Writes ARTICLE (fetched from /api/article) into #root.
APP_SCRIPT = b"""
fetch('/api/article').then(r => r.json()).then(a => {
  const root = document.getElementById('root');
  root.innerHTML = '<article><h1>' + a.title + '</h1>' +
    a.paras.map(p => '<p>' + p + '</p>').join('') + '</article>';
});
"""


def browser_or_skip() -> None:
    """Skip when this machine has no browser tier; in CI (which installs both) fail."""
    state = browser_state(BrowserSettings())
    if state.usable:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: the browser tier is {state.reason}")
    pytest.skip(f"browser tier {state.reason}")


def shell_page(
    extra_body: str = "", script: str = '<script src="/static/app.js"></script>'
) -> bytes:
    """A page with an empty mount point that its script fills in."""
    return (
        "<!doctype html><html><head><title>Field notes</title></head><body>"
        f'<div id="root"></div>{extra_body}{script}</body></html>'
    ).encode()


def serve_app(upstream: ReplayUpstream, host: str, path: str, page: bytes | None = None) -> str:
    """Serve a script-built article at ``https://host/path``; its URL."""
    upstream.route(host, path, Reply(200, page or shell_page(), HTML))
    upstream.route(host, "/static/app.js", Reply(200, APP_SCRIPT, JS))
    upstream.route(host, "/api/article", Reply(200, json.dumps(ARTICLE).encode(), JSON))
    return f"https://{host}{path}"
