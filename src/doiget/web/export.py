"""research_export's formats, and its link check.

Every renderer takes the session document (:func:`doiget.web.research.session_document`:
steps with their derived ``supersededBy``, branches, gaps, sources in the order they
were found) and returns text that depends on nothing else, so the same session
always exports to the same bytes. Bibliographies are built by ``doiget.cite`` from
:class:`~doiget.models.Work` objects, the same code as the papers toolset's exports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import anyio

from doiget.cite import ACCESSED_KEY
from doiget.cite.bibtex import to_bibtex_many
from doiget.cite.citekey import unique_citekeys
from doiget.cite.csl import to_csl_many
from doiget.controls import one_line
from doiget.errors import DoigetError
from doiget.models import Author, Work
from doiget.net.client import SourceClient, Timeouts
from doiget.net.network import Network
from doiget.sources.names import author_from_name
from doiget.web.failure import Kind, kind_of
from doiget.web.requests import ExportFormat
from doiget.web.results import LinkState

# -- works from recorded sources ------------------------------------------------------


def _author(name: str) -> Author:
    """'Family, Given' as recorded by the tools; a display name or organisation else."""
    family, comma, given = name.partition(",")
    if comma and family.strip():
        return Author(family=family.strip(), given=given.strip() or None)
    return author_from_name(name)


def _csl_type(source: Mapping[str, Any]) -> str:
    kind = source.get("kind")
    if kind == "patent":
        return "patent"
    if kind == "paper":
        return "article-journal" if source.get("doi") or source.get("journal") else "article"
    return "webpage"


def work_of(source: Mapping[str, Any]) -> Work:
    """The citable work of one recorded source."""
    csl_type = _csl_type(source)
    extra: dict[str, Any] = {}
    if csl_type == "webpage" and source.get("foundAt"):
        extra[ACCESSED_KEY] = str(source["foundAt"])[:10]
    return Work(
        source=str(source.get("tool") or "research"),
        title=source.get("title") or None,
        authors=tuple(_author(name) for name in source.get("authors") or ()),
        year=source.get("year"),
        doi=source.get("doi"),
        venue=(source.get("journal") or None) if csl_type != "webpage" else None,
        type=csl_type,
        url=source.get("url"),
        extra=extra,
    )


def works_of(sources: Iterable[Mapping[str, Any]]) -> list[Work]:
    """The citable works of recorded sources, in the same order."""
    return [work_of(source) for source in sources]


# -- renderers --------------------------------------------------------------------------


def render(format_name: ExportFormat, document: Mapping[str, Any]) -> str:
    """The session ``document`` in ``format_name``."""
    if format_name == "markdown":
        return to_markdown(document)
    if format_name == "json":
        return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    works = works_of(document.get("sources", []))
    if format_name == "bibtex":
        return to_bibtex_many(works) if works else ""
    if format_name == "csl-json":
        items = to_csl_many(works)
        return json.dumps(items, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if format_name == "ris":
        return to_ris(works)
    raise ValueError(f"unknown export format {format_name!r}")


_RIS_TYPES: Final = {
    "article-journal": "JOUR",
    "article": "JOUR",
    "patent": "PAT",
    "webpage": "ELEC",
}


def _ris_line(tag: str, value: str) -> str:
    # One line per tag: a value never carries a line break into the next record.
    return f"{tag}  - {one_line(value)}"


def to_ris(works: Sequence[Work]) -> str:
    """RIS records (``TAG  - value`` lines, LF endings), ids matching the BibTeX keys."""
    records: list[str] = []
    for work, key in zip(works, unique_citekeys(works), strict=True):
        lines = [_ris_line("TY", _RIS_TYPES.get(work.type or "", "GEN")), _ris_line("ID", key)]
        lines += [_ris_line("AU", author.sort_name) for author in work.authors if author.sort_name]
        if work.title:
            lines.append(_ris_line("TI", work.title))
        if work.year:
            lines.append(_ris_line("PY", str(work.year)))
        if work.venue:
            lines.append(_ris_line("JO", work.venue))
        if work.doi:
            lines.append(_ris_line("DO", work.doi))
        if work.url:
            lines.append(_ris_line("UR", work.url))
        lines.append("ER  - ")
        records.append("\n".join(lines) + "\n")
    return "\n".join(records)


_MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>#|!])")


def _md(text: Any) -> str:
    """External text on one line, with markdown's active characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", one_line(str(text)))


def _step_heading(step: Mapping[str, Any]) -> str:
    labels = []
    if step.get("isRevision") and step.get("revisesStep"):
        labels.append(f"revises step {step['revisesStep']}")
    if step.get("supersededBy"):
        labels.append(f"superseded by step {step['supersededBy']}")
    if step.get("branchId"):
        where = f" from step {step['branchFromStep']}" if step.get("branchFromStep") else ""
        labels.append(f"branch {_md(step['branchId'])}{where}")
    suffix = f" ({'; '.join(labels)})" if labels else ""
    return f"### Step {step['stepNumber']}{suffix}"


def _markdown_step(step: Mapping[str, Any]) -> list[str]:
    lines = [_step_heading(step), "", _md(step.get("searchStep", "")), ""]
    if step.get("reasoning"):
        lines.append(f"- Reasoning: {_md(step['reasoning'])}")
    if step.get("confidence") is not None:
        lines.append(f"- Confidence: {step['confidence']}")
    rejected = step.get("rejectedApproaches") or []
    if rejected:
        lines.append(f"- Rejected approaches: {'; '.join(_md(item) for item in rejected)}")
    if step.get("knowledgeGap"):
        lines.append(f"- Knowledge gap: {_md(step['knowledgeGap'])}")
    lines.append(f"- Recorded: {step.get('recordedAt', '')}")
    lines.append("")
    return lines


def _markdown_source(number: int, source: Mapping[str, Any]) -> str:
    title = _md(source.get("title") or source.get("url", ""))
    parts = [f"{number}. [{title}](<{_link(source.get('url', ''))}>)"]
    byline = "; ".join(_md(name) for name in source.get("authors") or ())
    if source.get("year"):
        byline = f"{byline} ({source['year']})" if byline else f"({source['year']})"
    if byline:
        parts.append(byline)
    if source.get("journal"):
        parts.append(f"*{_md(source['journal'])}*")
    if source.get("doi"):
        parts.append(f"doi:{_md(source['doi'])}")
    parts.append(f"{source.get('kind', 'web')}, found by {source.get('tool', '')}")
    return " — ".join(parts)


def _link(url: str) -> str:
    """A URL safe inside ``<...>``: no spaces or angle brackets to end it early."""
    return url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")


def to_markdown(document: Mapping[str, Any]) -> str:
    """A readable report: goal, metadata, every step, open questions, numbered sources."""
    steps = document.get("steps", [])
    sources = document.get("sources", [])
    gaps = document.get("gaps", [])
    lines = [
        f"# Research: {_md(document.get('researchGoal', ''))}",
        "",
        f"- Session: `{document.get('sessionId', '')}`",
        f"- Started: {document.get('startedAt', '')}",
        f"- Last updated: {document.get('updatedAt', '')}",
        f"- Status: {'complete' if document.get('isComplete') else 'in progress'}",
        f"- Steps: {len(steps)}; sources: {len(sources)}",
        "",
        "## Steps",
        "",
    ]
    for step in steps:
        lines += _markdown_step(step)
    lines += ["## Open questions", ""]
    lines += [f"- {_md(gap['gap'])} (step {gap['foundInStep']})" for gap in gaps] or ["None."]
    lines += ["", "## Sources", ""]
    numbered = [_markdown_source(n, source) for n, source in enumerate(sources, start=1)]
    lines += numbered or ["None recorded."]
    lines += [
        "",
        "---",
        "Source titles and links are external content, recorded as the tools found them.",
    ]
    return "\n".join(lines) + "\n"


# -- link check -----------------------------------------------------------------------

LINK_TIMEOUTS: Final = Timeouts(connect=5.0, read=10.0, total=10.0)
LINK_CONCURRENCY: Final = 8
# Seconds the whole check may take; links not checked by then are "unchecked".
LINK_BUDGET: Final = 60.0
LINK_BYTES: Final = 1024
# Statuses of a page that exists but will not show itself to a robot.
_LIVE_ERRORS: Final = frozenset({401, 403, 405, 429})
_ERROR_STATUSES: Final = frozenset(range(400, 600))


async def _liveness(client: SourceClient, url: str) -> LinkState:
    try:
        fetched = await client.get(
            url,
            max_bytes=LINK_BYTES,
            truncate=True,
            accept_status=_ERROR_STATUSES,
            timeouts=LINK_TIMEOUTS,
        )
    except DoigetError as exc:
        # The SSRF guard, scheme and block-list refusals happen before any connection.
        refused = exc.denial is not None and kind_of(exc) is Kind.VALIDATION
        return "refused" if refused else "dead"
    return "live" if fetched.status < 400 or fetched.status in _LIVE_ERRORS else "dead"


async def check_links(
    network: Network,
    urls: Iterable[str],
    *,
    concurrency: int = LINK_CONCURRENCY,
    budget: float = LINK_BUDGET,
) -> dict[str, LinkState]:
    """``{url: "live" | "dead" | "refused" | "unchecked"}``, sorted by URL.

    One small GET per URL through the web client (SSRF guard, block list, rate
    limits), ``concurrency`` at a time. Best effort: a link the check could not
    reach within ``budget`` seconds is "unchecked", never an error.
    """
    wanted = sorted(set(urls))
    client = network.client("web", any_public_host=True)
    limiter = anyio.CapacityLimiter(concurrency)
    found: dict[str, LinkState] = {}

    async def check(url: str) -> None:
        async with limiter:
            found[url] = await _liveness(client, url)

    with anyio.move_on_after(budget):
        async with anyio.create_task_group() as group:
            for url in wanted:
                group.start_soon(check, url)
    return {url: found.get(url, "unchecked") for url in wanted}
