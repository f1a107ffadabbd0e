"""``doiget web search`` and ``doiget web scrape``: the web tools from the shell.

Arguments are checked against the same input schemas as the MCP tools; ``--json``
prints exactly the tool's structured result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from doiget.cli.output import JSON_OPTION_HELP, emit_json, handles_errors, run_closing, runtime
from doiget.cli.output import wants_json as _wants_json
from doiget.server.toolset import object_schema
from doiget.server.validation import validate_arguments
from doiget.web.params import (
    ACADEMIC_SEARCH,
    DEFAULT_SCRAPE_BYTES,
    EXPORT_INPUTS,
    EXPORT_REQUIRED,
    GET_SESSION_INPUTS,
    GET_SESSION_REQUIRED,
    PATENT_SEARCH,
    SCRAPE_PAGE,
    SEARCH_AND_SCRAPE,
    SEQUENTIAL_SEARCH_INPUTS,
    SEQUENTIAL_SEARCH_REQUIRED,
    WEB_SEARCH,
)

if TYPE_CHECKING:
    from doiget.web.outcome import Outcome
    from doiget.web.service import WebCore

# The core call behind each tool.
_METHODS: dict[str, Callable[[WebCore, Mapping[str, Any]], Awaitable[Outcome]]] = {
    "web_search": lambda web, args: web.search(args),
    "scrape_page": lambda web, args: web.scrape(args),
    "search_and_scrape": lambda web, args: web.search_and_scrape(args),
    "academic_search": lambda web, args: web.academic_search(args),
    "patent_search": lambda web, args: web.patent_search(args),
    "sequential_search": lambda web, args: web.research_step(args),
    "get_research_session": lambda web, args: web.research_session(args),
    "research_export": lambda web, args: web.research_export(args),
}

JsonFlag = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
NumResults = Annotated[int, typer.Option("--num-results", "-n", help="1-10.")]
YearFrom = Annotated[int | None, typer.Option(help="First year.")]
YearTo = Annotated[int | None, typer.Option(help="Last year.")]
SessionOption = Annotated[
    str | None, typer.Option("--session", help="Record what is found in this research session.")
]
out = Console()
web_app = typer.Typer(help="Search the web and read pages (the web toolset).", no_args_is_help=True)


def _call(
    ctx: typer.Context,
    tool: str,
    properties: Mapping[str, Any],
    args: dict[str, Any],
    required: tuple[str, ...],
) -> dict[str, Any]:
    """The tool's full result (a linked result is read back: a shell wants it all)."""
    from doiget.web.service import WebCore

    given = {name: value for name, value in args.items() if value is not None}
    valid = validate_arguments(tool, object_schema(properties, required), given)
    core = WebCore(runtime(ctx).settings)

    async def work(web: WebCore) -> dict[str, Any]:
        outcome = await _METHODS[tool](web, valid)
        if outcome.link is not None:
            stored = await web.read_artifact(outcome.link.uri)
            if stored is not None:
                body: dict[str, Any] = json.loads(stored[0])
                return body
        return outcome.body

    return run_closing(core, work)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    """Page text without control characters: a page must not drive the terminal."""
    return _CONTROL.sub("", text)


def _shown(value: Any) -> str:
    """External text for rich output: control characters gone, markup escaped."""
    return escape(_printable(str(value or "")))


@web_app.command("search")
@handles_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Search terms.")],
    num_results: NumResults = 5,
    time_range: Annotated[str | None, typer.Option(help="day, week, month or year.")] = None,
    safe: Annotated[str, typer.Option(help="off, medium or high.")] = "medium",
    language: Annotated[str | None, typer.Option(help="ISO 639-1 code.")] = None,
    country: Annotated[str | None, typer.Option(help="ISO 3166-1 alpha-2 code.")] = None,
    site: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
    lens: Annotated[str | None, typer.Option(help="Domain lens, e.g. academic.")] = None,
    exact_terms: Annotated[str | None, typer.Option(help="Exact phrase.")] = None,
    exclude_terms: Annotated[str | None, typer.Option(help="Words to exclude.")] = None,
    provider: Annotated[str | None, typer.Option(help="Use this provider alone.")] = None,
    claim: Annotated[str | None, typer.Option(help="Claim to triage results against.")] = None,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search the web (the web_search tool)."""
    body = _call(
        ctx,
        "web_search",
        WEB_SEARCH,
        {
            "query": query,
            "num_results": num_results,
            "time_range": time_range,
            "safe": safe,
            "language": language,
            "country": country,
            "site": site,
            "lens": lens,
            "exact_terms": exact_terms,
            "exclude_terms": exclude_terms,
            "provider": provider,
            "claim": claim,
            "sessionId": session,
        },
        ("query",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for number, result in enumerate(body.get("results", []), start=1):
        out.print(f"[bold]{number}. {_shown(result['title'])}[/bold]")
        out.print(f"   {_shown(result['url'])}")
        if result.get("snippet"):
            out.print(f"   {_shown(result['snippet'])}", style="dim")
        if result.get("claimSignal"):
            out.print(f"   claim: {_shown(result['claimSignal'])}", style="green")
    for note in body.get("notes", []):
        out.print(f"note: {_shown(note)}", style="yellow")
    hints = body.get("hints")
    if hints:
        out.print(f"No results ({hints['reason']}). Try: " + "; ".join(hints["suggestedActions"]))


@web_app.command("scrape")
@handles_errors
def scrape(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The http(s) URL to read.")],
    mode: Annotated[str, typer.Option(help="full, preview or raw.")] = "full",
    max_length: Annotated[
        int, typer.Option("--max-length", help="Byte cap on content (at most 5000000).")
    ] = DEFAULT_SCRAPE_BYTES,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Read a page or document (the scrape_page tool)."""
    body = _call(
        ctx,
        "scrape_page",
        SCRAPE_PAGE,
        {"url": url, "mode": mode, "max_length": max_length, "sessionId": session},
        ("url",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    typer.echo(_printable(body["content"]))
    citation = body["citation"]["formatted"]["apa"]
    state = " (truncated)" if body.get("truncated") else ""
    typer.echo(f"\n-- {body['contentType']}, {body['contentLength']} bytes{state}", err=True)
    typer.echo(f"-- {citation}", err=True)


@web_app.command("search-and-scrape")
@handles_errors
def search_and_scrape(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Search terms.")],
    num_results: NumResults = 3,
    dedup: Annotated[
        bool, typer.Option("--dedup/--no-dedup", help="Drop repeated paragraphs.")
    ] = True,
    per_source: Annotated[
        int, typer.Option("--max-length-per-source", help="Byte cap per page.")
    ] = DEFAULT_SCRAPE_BYTES,
    total: Annotated[int, typer.Option("--total-max-length", help="Byte cap overall.")] = 300_000,
    filter_by_query: Annotated[
        bool | None,
        typer.Option("--filter/--no-filter", help="Drop off-topic pages (default: with --claim)."),
    ] = None,
    provider: Annotated[str | None, typer.Option(help="Search provider for the search.")] = None,
    claim: Annotated[str | None, typer.Option(help="Claim to gather evidence for.")] = None,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search, read the top pages, and combine them (the search_and_scrape tool)."""
    body = _call(
        ctx,
        "search_and_scrape",
        SEARCH_AND_SCRAPE,
        {
            "query": query,
            "num_results": num_results,
            "deduplicate": dedup,
            "max_length_per_source": per_source,
            "total_max_length": total,
            "filter_by_query": filter_by_query,
            "provider": provider,
            "claim": claim,
            "sessionId": session,
        },
        ("query",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for number, source in enumerate(body["sources"], start=1):
        score = source["scores"]["overall"]
        out.print(f"[bold][{number}] {_shown(source['title'])}[/bold] ({score:.2f})")
        out.print(f"    {_shown(source['url'])}")
        if source.get("claimSignal"):
            out.print(f"    claim: {_shown(source['claimSignal'])}", style="green")
    for failure in body["scrapeFailures"]:
        out.print(f"failed: {_shown(failure['url'])}: {_shown(failure['reason'])}", style="yellow")
    summary = body["summary"]
    out.print(
        f"{body['status']}: {summary['urlsScraped']} of {summary['urlsSearched']} pages read, "
        f"{summary['urlsFailed']} failed"
    )


@web_app.command("papers")
@handles_errors
def papers(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Topic or title words.")],
    num_results: NumResults = 5,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    source: Annotated[
        str, typer.Option(help="all, arxiv, pubmed, openalex, crossref or semantic_scholar.")
    ] = "all",
    open_access: Annotated[bool, typer.Option(help="Only open-access papers.")] = False,
    pdf_only: Annotated[bool, typer.Option(help="Only papers with a PDF link.")] = False,
    sort_by: Annotated[str, typer.Option(help="relevance or date.")] = "relevance",
    provider: Annotated[str | None, typer.Option(help="Ask this index alone.")] = None,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search scholarly indexes (the academic_search tool)."""
    body = _call(
        ctx,
        "academic_search",
        ACADEMIC_SEARCH,
        {
            "query": query,
            "num_results": num_results,
            "year_from": year_from,
            "year_to": year_to,
            "source": source,
            "open_access": open_access,
            "pdf_only": pdf_only,
            "sort_by": sort_by,
            "provider": provider,
            "sessionId": session,
        },
        ("query",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for number, paper in enumerate(body["papers"], start=1):
        year = f" ({paper['year']})" if paper.get("year") else ""
        out.print(f"[bold]{number}. {_shown(paper['title'])}[/bold]{year}")
        if paper.get("ref"):
            out.print(f"   ref: {_shown(paper['ref'])}")
        if paper.get("pdfUrl"):
            out.print(f"   pdf: {_shown(paper['pdfUrl'])}", style="green")
        if paper.get("retractionStatus", {}).get("retracted"):
            out.print("   RETRACTED", style="bold red")
    out.print(f"{body['resultCount']} of {body['totalResults']} from {body['source']}")


@web_app.command("patents")
@handles_errors
def patents(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What the invention does.")] = None,
    num_results: NumResults = 5,
    search_type: Annotated[
        str, typer.Option(help="prior_art, specific or landscape.")
    ] = "prior_art",
    office: Annotated[str, typer.Option(help="all, US, EP, WO, JP, CN or KR.")] = "all",
    assignee: Annotated[str | None, typer.Option(help="Applicant / owner.")] = None,
    inventor: Annotated[str | None, typer.Option(help="Inventor name.")] = None,
    cpc: Annotated[str | None, typer.Option(help="CPC code, e.g. G06F.")] = None,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    provider: Annotated[str | None, typer.Option(help="lens or epo.")] = None,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search patents (the patent_search tool)."""
    body = _call(
        ctx,
        "patent_search",
        PATENT_SEARCH,
        {
            "query": query,
            "num_results": num_results,
            "search_type": search_type,
            "patent_office": office,
            "assignee": assignee,
            "inventor": inventor,
            "cpc_code": cpc,
            "year_from": year_from,
            "year_to": year_to,
            "provider": provider,
            "sessionId": session,
        },
        (),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for patent in body["patents"]:
        out.print(f"[bold]{_shown(patent['number'])}[/bold] {_shown(patent['title'])}")
        owner = patent.get("assignee")
        dates = ", ".join(f"{k} {patent[k]}" for k in ("filed", "granted") if patent.get(k))
        out.print(f"    {_shown(owner or '')} {dates}".rstrip())
        out.print(f"    {_shown(patent['url'])}", style="dim")
    for cluster in body.get("assigneeClusters", []):
        out.print(f"  {cluster['count']:3d}  {_shown(cluster['assignee'])}")
    hints = body.get("hints")
    if hints:
        out.print(f"No patents ({hints['reason']}). Try: " + "; ".join(hints["suggestedActions"]))


research_app = typer.Typer(
    help="Research sessions: record steps, read them back, export them.", no_args_is_help=True
)
web_app.add_typer(research_app, name="research")


@research_app.command("step")
@handles_errors
def research_step(
    ctx: typer.Context,
    step: Annotated[str, typer.Argument(help="What this step does.")],
    number: Annotated[int, typer.Option("--number", help="Step number (1 starts a session).")],
    session: Annotated[str | None, typer.Option("--session", help="Session id.")] = None,
    goal: Annotated[str | None, typer.Option(help="The research goal.")] = None,
    more: Annotated[bool, typer.Option("--more/--done", help="Whether more steps follow.")] = True,
    reasoning: Annotated[str | None, typer.Option(help="Why this direction.")] = None,
    confidence: Annotated[float | None, typer.Option(help="0-1.")] = None,
    revises: Annotated[int | None, typer.Option(help="The step this revises.")] = None,
    branch_from: Annotated[int | None, typer.Option(help="Branch from this step.")] = None,
    branch_id: Annotated[str | None, typer.Option(help="Name of the branch.")] = None,
    gap: Annotated[str | None, typer.Option(help="A knowledge gap found.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Record one research step (the sequential_search tool)."""
    body = _call(
        ctx,
        "sequential_search",
        SEQUENTIAL_SEARCH_INPUTS,
        {
            "searchStep": step,
            "stepNumber": number,
            "nextStepNeeded": more,
            "sessionId": session,
            "researchGoal": goal,
            "reasoning": reasoning,
            "confidence": confidence,
            "revisesStep": revises,
            "branchFromStep": branch_from,
            "branchId": branch_id,
            "knowledgeGap": gap,
        },
        SEQUENTIAL_SEARCH_REQUIRED,
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    state = "complete" if body["isComplete"] else "open"
    out.print(f"session {body['sessionId']}: step {body['currentStep']} recorded ({state})")


@research_app.command("show")
@handles_errors
def research_show(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="Session id.")],
    step: Annotated[int | None, typer.Option("--step", help="One step only.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Read a research session (the get_research_session tool)."""
    body = _call(
        ctx,
        "get_research_session",
        GET_SESSION_INPUTS,
        {"sessionId": session, "stepId": step},
        GET_SESSION_REQUIRED,
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    out.print(f"[bold]{_shown(body.get('researchGoal'))}[/bold] ({session})")
    if "step" in body:  # one step asked for
        out.print(json.dumps(body["step"], ensure_ascii=False, indent=2), markup=False)
        return
    for item in body.get("stepIndex", []):
        note = f" (superseded by {item['supersededBy']})" if item.get("supersededBy") else ""
        out.print(f"{item['stepNumber']}. [{item['branchId']}] {_shown(item['oneLiner'])}{note}")
    for gap in body.get("gaps", []):
        out.print(f"gap (step {gap['foundInStep']}): {_shown(gap['gap'])}", style="yellow")
    for source in body.get("sources", []):
        out.print(f"- {_shown(source.get('title'))} {_shown(source.get('url'))}")


@research_app.command("export")
@handles_errors
def research_export(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="Session id.")],
    format_: Annotated[
        str, typer.Option("--format", help="markdown, json, bibtex, csl-json or ris.")
    ] = "markdown",
    verify_links: Annotated[bool, typer.Option(help="Check each source URL is live.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Export a research session (the research_export tool); prints the document."""
    body = _call(
        ctx,
        "research_export",
        EXPORT_INPUTS,
        {"sessionId": session, "format": format_, "verify_links": verify_links},
        EXPORT_REQUIRED,
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    typer.echo(_printable(body["document"]))
