"""The audit as one self-contained HTML page a person reads beside the draft.

Everything is in the page: the style is inline, there is no script, font, image or
stylesheet to fetch, and the only links leaving it are plain links to a work's DOI or
arXiv page. Every text drawn from the draft, its bibliography or a cited work is
escaped, so a sentence or title holding markup shows as text.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Final

from doiget.claims.audit_contracts import AuditReport, CitationCheck, KeyCheck
from doiget.claims.report import LABELS, Fact, counts, facts, is_problem, link, worst_first
from doiget.verify.contracts import Row

OPENING: Final = 90  # characters of a sentence shown in the list of citations
_STYLE: Final = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2329;
background:#f6f7f9}
header,main,nav{max-width:60rem;margin:0 auto;padding:0 1rem}
h1{font-size:1.5rem;margin:1.2rem 0 .6rem}h2{font-size:1.2rem;margin:1.6rem 0 .6rem}
h3{font-size:1rem;margin:0 0 .4rem}h4{font-size:.95rem;margin:.6rem 0 .2rem}
.partial{background:#fff4d6;border:1px solid #e0b542;padding:.5rem .8rem;border-radius:6px}
.summary{display:flex;flex-wrap:wrap;gap:.5rem;margin:0;padding:0}
.summary div{background:#fff;border:1px solid #d5d9de;border-radius:6px;padding:.3rem .7rem}
.summary dt{font-size:.8rem;color:#56606b}.summary dd{margin:0;font-size:1.3rem;font-weight:600}
.summary .hit{border-color:#c9372c}.summary .hit dd{color:#c9372c}
nav ul{padding-left:1.2rem;list-style:none}nav li{margin:.15rem 0}
article{background:#fff;border:1px solid #d5d9de;border-left:6px solid #8a939c;
border-radius:6px;padding:.7rem 1rem;margin:.8rem 0}
blockquote{margin:.3rem 0;padding:.2rem .8rem;border-left:3px solid #c4cad1;color:#333}
.facts{margin:.2rem 0 .4rem;padding-left:1.2rem}.facts li{margin:.15rem 0}
.label{font-weight:600;color:#56606b;margin-right:.3rem}.at{color:#56606b;font-size:.9rem}
q{font-style:italic}.back{font-size:.85rem;margin:.4rem 0 0}
.badge{display:inline-block;border-radius:4px;padding:0 .45rem;font-size:.8rem;
font-weight:600;color:#fff;background:#8a939c;vertical-align:1px}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{border:1px solid #d5d9de;padding:.3rem .5rem;text-align:left;vertical-align:top}
.s-not_real,.s-missing,.s-retracted,.s-not_addressed,.v-not_found{background:#c9372c;
border-left-color:#c9372c}
.s-quote_differs,.s-cues,.s-miscited,.v-miscited{background:#d9822b;border-left-color:#d9822b}
.s-partly{background:#b59b1f;border-left-color:#b59b1f}
.s-unchecked,.v-uncertain{background:#5b7ba6;border-left-color:#5b7ba6}
.s-ok,.v-verified{background:#2f8a4c;border-left-color:#2f8a4c}
article.citation{background:#fff}
"""


def as_html(report: AuditReport) -> str:
    """The report as one HTML page (see the module docstring)."""
    title = f"Citation audit of {report.name}"
    ordered = worst_first(report)
    works = {row.key: index for index, row in enumerate(report.works, 1) if row.key}
    problems = [c for c in ordered if is_problem(c)]
    rest = [c for c in ordered if not is_problem(c)]
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f'<header id="top"><h1>{escape(title)}</h1>{_partial(report)}{_summary(report)}</header>',
        _contents(ordered),
        "<main>",
        _group("attention", "Needs attention", problems, works),
        _group("rest", "The other citations", rest, works),
        _works(report.works),
        _notes(report.notes),
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _partial(report: AuditReport) -> str:
    if not report.partial:
        return ""
    why = f": {escape(report.stopped)}" if report.stopped else ""
    return (
        f'<p class="partial"><strong>Partial report</strong>{why}. '
        "The citations not checked say so below.</p>"
    )


def _summary(report: AuditReport) -> str:
    cells = []
    for label, number, alarming in counts(report.summary):
        hit = ' class="hit"' if alarming and number else ""
        cells.append(f"<div{hit}><dt>{escape(label)}</dt><dd>{number}</dd></div>")
    return f'<dl class="summary">{"".join(cells)}</dl>'


def _badge(kind: str, text: str) -> str:
    return f'<span class="badge {escape(kind, quote=True)}">{escape(text)}</span>'


def _contents(ordered: list[CitationCheck]) -> str:
    items = "".join(
        f'<li id="toc-c{c.index}"><a href="#c{c.index}">[{c.index}] {escape(c.place.shown())}</a> '
        f"{_badge('s-' + c.status, LABELS[c.status])} "
        f'<span class="at">{escape(_opening(c.sentence))}</span></li>'
        for c in ordered
    )
    return f'<nav id="contents" aria-label="Citations"><h2>Citations</h2><ul>{items}</ul></nav>'


def _opening(sentence: str) -> str:
    """The sentence's first words, to tell a citation from its neighbours."""
    words = " ".join(sentence.split())
    return words if len(words) <= OPENING else words[: OPENING - 1].rsplit(" ", 1)[0] + "…"


def _group(anchor: str, title: str, citations: list[CitationCheck], works: dict[str, int]) -> str:
    if not citations:
        return ""
    body = "".join(_citation(citation, works) for citation in citations)
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{body}</section>'


def _citation(citation: CitationCheck, works: dict[str, int]) -> str:
    anchor = f"c{citation.index}"
    keys = "".join(_key(check, works) for check in citation.keys)
    note = f"<p>{escape(citation.note)}</p>" if citation.note else ""
    return (
        f'<article class="citation s-{citation.status}" id="{anchor}">'
        f"<h3>{_badge('s-' + citation.status, LABELS[citation.status])} "
        f'<a href="#{anchor}">[{citation.index}] {escape(citation.place.shown())}</a></h3>'
        f"<blockquote>{escape(citation.sentence)}</blockquote>{keys}{note}"
        f'<p class="back"><a href="#toc-{anchor}">back to the list</a></p></article>'
    )


def _key(check: KeyCheck, works: dict[str, int]) -> str:
    verdict = _badge(f"v-{check.verdict}", check.verdict.replace("_", " ")) if check.verdict else ""
    record = (
        f' <a class="at" href="#w{works[check.key]}">the record</a>' if check.key in works else ""
    )
    lines = "".join(_fact(fact) for fact in facts(check) if fact.label != "verdict" or not verdict)
    return f'<h4>{escape(check.key)} {verdict}{record}</h4><ul class="facts">{lines}</ul>'


def _fact(fact: Fact) -> str:
    quoted = f" <q>{escape(fact.quoted)}</q>" if fact.quoted is not None else ""
    at = f' <span class="at">({escape(fact.at)})</span>' if fact.at else ""
    return (
        f'<li class="f-{escape(fact.label, quote=True)}"><span class="label">'
        f"{escape(fact.label)}</span>{escape(fact.text)}{quoted}{at}</li>"
    )


def _works(rows: list[Row]) -> str:
    if not rows:
        return ""
    body = "".join(_work(index, row) for index, row in enumerate(rows, 1))
    return (
        '<section id="works"><h2>Cited works</h2><table><thead><tr><th>key</th>'
        f"<th>verdict</th><th>the record</th></tr></thead><tbody>{body}</tbody></table></section>"
    )


def _work(index: int, row: Row) -> str:
    match = row.match
    record = escape(row.note or "no record")
    if match is not None:
        said = ", ".join(
            escape(str(part)) for part in (match.title, match.venue, match.year) if part
        )
        href = link(match.ref)
        ref = f' <a href="{escape(href, quote=True)}">{escape(match.ref or "")}</a>' if href else ""
        record = said + ref
    verdict = _badge(f"v-{row.verdict}", row.verdict.replace("_", " "))
    key = escape(row.key or "")
    return f'<tr id="w{index}"><td>{key}</td><td>{verdict}</td><td>{record}</td></tr>'


def _notes(notes: Iterable[str]) -> str:
    items = "".join(f"<li>{escape(note)}</li>" for note in notes)
    return (
        f'<section id="notes"><h2>Notes on reading the draft</h2><ul>{items}</ul></section>'
        if items
        else ""
    )
