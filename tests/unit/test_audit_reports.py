"""The audit's Markdown and HTML reports: the summary first, problems before the rest,
every citation accounted for, and text from the draft or a cited work shown as text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from auditfakes import HOSTILE, QUOTE_ALTERED, FakeChecker, FakeQuotes, FakeVerifier, problem_draft
from doiget.claims.audit import Audit, audit
from doiget.claims.audit_contracts import AuditReport
from doiget.claims.manuscripts.model import Citation, Cited, Place
from doiget.claims.report import link
from doiget.claims.report.markdown import as_markdown
from doiget.claims.report.page import as_html


async def _report(hostile_sentence: bool = True) -> AuditReport:
    manuscript = problem_draft()
    if hostile_sentence:
        manuscript.citations.append(
            Citation(Place("draft.tex", 40), f"Markup {HOSTILE} *stars* [x](y).", ("hostile",))
        )
        manuscript.bibliography["hostile"] = Cited(
            "hostile", f"@article{{hostile, title = {{{HOSTILE}}}, year = 2020}}"
        )
    return await audit(manuscript, checker=FakeChecker(), verifier=FakeVerifier(),
                       quotes=FakeQuotes(), fetch=False)  # fmt: skip


async def test_markdown_gives_the_summary_then_problems_then_the_rest() -> None:
    text = as_markdown(await _report())
    assert text.startswith("# Citation audit of draft.tex\n")
    assert "| citations | 11 |" in text and "| not real | 1 |" in text
    assert "| quotations not found | 1 |" in text
    headings = re.findall(r"^### \[c(\d+)\] (\S+): (.+)$", text, re.MULTILINE)
    assert [int(index) for index, *_ in headings][:3] == [2, 7, 8]
    assert headings[0] == ("2", "draft.tex:4", "not real")
    assert sorted(int(index) for index, *_ in headings) == list(range(1, 12))
    attention, rest = text.index("## Needs attention"), text.index("## The other citations")
    assert attention < text.index("[c4]") < rest < text.index("[c1]")
    assert "evidence: rationale, score 0.81" in text and "(p. 3, 2 Methods)" in text
    assert "the claim says \u201c40 %\u201d, the source \u201c14 %\u201d" in text
    assert f"\u201c{QUOTE_ALTERED}\u201d" in text and "not found (similarity 0.94)" in text
    assert "**Partial report**" not in text
    assert text.endswith(
        "## Notes on reading the draft\n\n- a \\\\cite inside a comment at line 40 was skipped\n"
    )


async def test_markdown_shows_markup_from_the_draft_as_text() -> None:
    text = as_markdown(await _report())
    assert "<script>" not in text and "\\<script\\>" in text
    assert "\\*stars\\*" in text and "\\[x\\](y)" in text


async def test_a_partial_report_says_so_in_markdown_and_html() -> None:
    run = Audit(problem_draft(), checker=FakeChecker(), verifier=FakeVerifier(),
                quotes=FakeQuotes(), fetch=False)  # fmt: skip
    report = run.report(stopped="interrupted (Ctrl-C)")
    text = as_markdown(report)
    assert "**Partial report**: interrupted (Ctrl-C)." in text
    assert text.count("not checked: interrupted (Ctrl-C)") >= 10
    page = as_html(report)
    assert "<strong>Partial report</strong>: interrupted (Ctrl-C)" in page


class _Page(HTMLParser):
    """The tags, ids, links and resources a page holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        if tag == "a":
            self.links.append(found.get("href") or "")
        self.sources += [found[name] or "" for name in ("src", "srcset") if name in found]
        if tag == "link":
            self.sources.append(found.get("href") or "")


async def test_the_html_page_is_self_contained_and_its_anchors_resolve() -> None:
    page = _Page()
    html = as_html(await _report())
    page.feed(html)
    assert "script" not in page.tags and "img" not in page.tags and not page.sources
    assert "@import" not in html and "url(" not in html
    inside = [href for href in page.links if href.startswith("#")]
    outside = [href for href in page.links if not href.startswith("#")]
    assert all(href[1:] in page.ids for href in inside)
    assert {f"c{n}" for n in range(1, 12)} <= page.ids
    assert {f"toc-c{n}" for n in range(1, 12)} <= page.ids
    assert outside and all(href.startswith("https://doi.org/10.5555/") for href in outside)


async def test_the_html_page_lists_problems_first_and_escapes_every_text() -> None:
    html = as_html(await _report())
    assert html.index('id="attention"') < html.index('id="c2"') < html.index('id="rest"')
    assert html.index('id="rest"') < html.index('id="c1"')
    contents = html[html.index('id="contents"') : html.index("</nav>")]
    assert (
        contents.index('href="#c2"') < contents.index('href="#c7"') < contents.index('href="#c1"')
    )
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>" not in html


@pytest.mark.parametrize(
    ("ref", "href"),
    [
        ("10.1000/xyz(1)", "https://doi.org/10.1000/xyz(1)"),
        ("arXiv:2401.12345", "https://arxiv.org/abs/2401.12345"),
        ("arXiv:hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001"),
        ('10.1000/a"onmouseover="x', "https://doi.org/10.1000/a%22onmouseover%3D%22x"),
        ("javascript:alert(1)", None),
        ("real", None),
        (None, None),
    ],
)
def test_links_leave_the_page_only_for_a_doi_or_arxiv_id(ref: str | None, href: str | None) -> None:
    assert link(ref) == href
