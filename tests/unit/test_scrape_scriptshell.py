"""Which pages the browser tier is for: script-built shells, never pages with real text."""

from __future__ import annotations

import pytest

from doiget.web.scrape.scriptshell import script_shell

PROSE = "<p>" + "A sentence of real server-rendered article text. " * 20 + "</p>"


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        (
            "<html><body><div id='root'></div><script src='/static/js/main.js'></script>"
            "</body></html>",
            "#root",
        ),
        (
            "<html><body><div id='__next'></div><script src='/_next/a.js'></script></body></html>",
            "#__next",
        ),
        (
            "<html><body><app-root></app-root><script src='main.js'></script></body></html>",
            "<app-root>",
        ),
        (
            "<html><body><div data-reactroot=''>Loading…</div>"
            "<script>boot()</script></body></html>",
            "[data-reactroot]",
        ),
        (
            "<html><body><noscript>You need to enable JavaScript to run this app.</noscript>"
            "<div id='x'></div><script src='/bundle.js'></script></body></html>",
            "noscript",
        ),
        (
            "<html><body><noscript>This site requires JavaScript.</noscript>"
            "<script>start()</script></body></html>",
            "noscript",
        ),
        (
            "<html><body><p>Loading</p><script src='https://cdn.example/app.js'></script></body>"
            "</html>",
            "script bundle",
        ),
        (
            "<html><body><script type='module'>" + "x=1;" * 600 + "</script></body></html>",
            "script bundle",
        ),
    ],
)
def test_script_built_shells_are_recognised(html: str, reason: str) -> None:
    found = script_shell(html)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "html",
    [
        # Real text beside a mount point and scripts (server-side rendering).
        f"<html><body><div id='__next'><article>{PROSE}</article></div>"
        "<script src='/_next/a.js'></script></body></html>",
        # A short page with no script at all.
        "<html><body><p>Short note.</p></body></html>",
        # Only JSON-LD and a JSON data block: not code that writes the page.
        "<html><body><div id='root'></div><script type='application/ld+json'>{}</script>"
        "<script type='application/json'>{\"a\": 1}</script></body></html>",
        # A small page with a tiny tracking snippet.
        "<html><body><p>Contact us at the front desk.</p><script>track()</script></body></html>",
        "",
        "not html at all",
    ],
)
def test_other_pages_are_not_shells(html: str) -> None:
    assert script_shell(html) is None


def test_text_inside_scripts_and_styles_does_not_count_as_visible() -> None:
    html = (
        "<html><head><style>" + "p{color:red}" * 100 + "</style></head><body>"
        "<div id='app'></div><script src='/app.js'></script>"
        "<script>window.__DATA__ = '" + "x" * 5000 + "'</script></body></html>"
    )
    assert script_shell(html) is not None
