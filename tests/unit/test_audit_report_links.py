"""The HTML report's links: every one stays in the page or is a plain https link to a
DOI or arXiv page, its reference percent-encoded, whatever a record's ref holds."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import unquote

import pytest

from auditfakes import FakeChecker, FakeQuotes, FakeVerifier, problem_draft
from doiget.claims.audit import Audit
from doiget.claims.report import link
from doiget.claims.report.page import as_html
from doiget.verify.contracts import Match

HOSTILE_REFS = [
    '10.1000/a"onclick="alert(1)',
    "10.1000/a b c",
    "10.1000/<script>alert(1)</script>",
    "10.1000/a'b&c#d?e=f",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "JaVaScRiPt:10.1000/x",
    " 10.1000/leading-space",
    'arXiv:2401.12345" onmouseover="x',
    "10.1000/a\nb",
]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.hrefs += [value or "" for name, value in attrs if name == "href"]


@pytest.mark.parametrize(
    ("ref", "href"),
    [
        ("10.1000/a b", "https://doi.org/10.1000/a%20b"),
        ("10.1000/a<b>", "https://doi.org/10.1000/a%3Cb%3E"),
        ("10.1000/a'b", "https://doi.org/10.1000/a%27b"),
        ("10.1000/a#b?c", "https://doi.org/10.1000/a%23b%3Fc"),
        ("10.1000/a\nb", None),
    ],
)
def test_a_doi_is_percent_encoded_in_its_link(ref: str, href: str | None) -> None:
    assert link(ref) == href


async def test_no_ref_a_record_holds_makes_a_link_leave_the_page_unsafely() -> None:
    report = await Audit(
        problem_draft(), checker=FakeChecker(), verifier=FakeVerifier(), quotes=FakeQuotes(),
        fetch=False,
    ).run()  # fmt: skip
    rows = [row for row in report.works if row.match is not None]
    assert len(rows) >= 2
    for index, row in enumerate(rows):
        row.match = Match(ref=HOSTILE_REFS[index % len(HOSTILE_REFS)], title="T")
    for ref in HOSTILE_REFS:
        rows[0].match = Match(ref=ref, title="T")
        page = _Links()
        page.feed(as_html(report))
        assert page.handlers == []
        outside = [href for href in page.hrefs if not href.startswith("#")]
        for href in outside:
            assert href.startswith(("https://doi.org/10.", "https://arxiv.org/abs/")), href
            assert not set(href) & set(" \"'<>\n\\"), href
            assert unquote(href).removeprefix("https://doi.org/") in HOSTILE_REFS or "arxiv" in href
