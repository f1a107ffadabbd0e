"""The audit as Markdown: the summary, then the citations that need attention, then the
rest, each with its place, sentence and what each cited work gives it."""

from __future__ import annotations

import re
from typing import Final

from doiget.claims.audit_contracts import AuditReport, CitationCheck
from doiget.claims.report import LABELS, Fact, counts, facts, is_problem, worst_first

# Characters Markdown reads as markup (and '<', which starts raw HTML), escaped so a
# sentence or title shows as written.
_MARKUP: Final = re.compile(r"([\\`*_{}\[\]<>#|!~])")


def text(value: str) -> str:
    """``value`` shown literally in Markdown, on one line."""
    return _MARKUP.sub(r"\\\1", " ".join(value.split()))


def as_markdown(report: AuditReport) -> str:
    """The report as a Markdown document."""
    lines = [f"# Citation audit of {text(report.name)}", ""]
    if report.partial:
        why = f": {text(report.stopped)}" if report.stopped else ""
        lines += [f"**Partial report**{why}. Citations not checked say so below.", ""]
    lines += ["| | |", "|---|---:|"]
    lines += [f"| {label} | {number} |" for label, number, _ in counts(report.summary)]
    lines.append("")
    ordered = worst_first(report)
    problems = [citation for citation in ordered if is_problem(citation)]
    rest = [citation for citation in ordered if not is_problem(citation)]
    for title, group in (("Needs attention", problems), ("The other citations", rest)):
        if group:
            lines += [f"## {title}", ""]
            for citation in group:
                lines += _citation(citation)
    if report.notes:
        lines += ["## Notes on reading the draft", ""]
        lines += [f"- {text(note)}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def _citation(citation: CitationCheck) -> list[str]:
    lines = [
        f"### [c{citation.index}] {text(citation.place.shown())}: {LABELS[citation.status]}",
        "",
        f"> {text(citation.sentence)}",
        "",
    ]
    for check in citation.keys:
        lines.append(f"- **{text(check.key)}**")
        lines += [f"  - {_fact(fact)}" for fact in facts(check)]
    if citation.note:
        lines.append(f"- {text(citation.note)}")
    lines.append("")
    return lines


def _fact(fact: Fact) -> str:
    said = f"{fact.label}: {text(fact.text)}"
    if fact.quoted is not None:
        said += f" \u2014 \u201c{text(fact.quoted)}\u201d"
    if fact.at:
        said += f" ({text(fact.at)})"
    return said
