"""``doiget web ...``: the web tools from the shell.

Each command builds the same request model as the MCP tool (same bounds, same
errors), runs the web core and prints the typed result; ``--json`` prints exactly the
tool's structured result, a large one in full rather than linked.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.text import Text

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    echo,
    emit_json,
    handles_errors_as,
    run_closing,
    runtime,
)
from doiget.cli.output import wants_json as _wants_json
from doiget.envelopes import WEB_ENVELOPE
from doiget.web import requests as rq
from doiget.web import results as rs

if TYPE_CHECKING:
    from doiget.web.outcome import Outcome
    from doiget.web.service import WebCore

ResultT = TypeVar("ResultT", bound=rs.WebResult)

NumResults = Annotated[int, typer.Option("--num-results", "-n", help="1-10.")]
YearFrom = Annotated[int | None, typer.Option(help="First year.")]
YearTo = Annotated[int | None, typer.Option(help="Last year.")]
SessionOption = Annotated[
    str | None, typer.Option("--session", help="Record what is found in this research session.")
]
out = console()
web_app = typer.Typer(help="Search the web and read pages (the web toolset).", no_args_is_help=True)


# Errors in the web tools' shape.
handles_errors = handles_errors_as(WEB_ENVELOPE)


def _run(
    ctx: typer.Context, kind: type[ResultT], call: Callable[[WebCore], Awaitable[Outcome]]
) -> ResultT:
    """``call``'s whole result (never a link: a shell wants it all)."""
    from doiget.web.service import WebCore

    core = WebCore(runtime(ctx).settings, links=False)

    async def work(web: WebCore) -> ResultT:
        result = (await call(web)).result
        if not isinstance(result, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(result).__name__}")
        return result

    return run_closing(core, work)


def _emit(ctx: typer.Context, json_output: bool, result: rs.WebResult) -> bool:
    """Print ``result`` as JSON when asked; whether it was."""
    if _wants_json(ctx, json_output):
        emit_json(result.wire())
        return True
    return False


def _shown(value: Any) -> str:
    """External text for the terminal (the console shows its control characters
    escaped, and reads no markup)."""
    return str(value or "")


def _strong(head: str, tail: str = "") -> Text:
    """``head`` in bold, then ``tail``."""
    return Text.assemble((head, "bold"), tail)


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
    request = cli_build(
        ctx,
        rq.WebSearchRequest,
        query=query,
        num_results=num_results,
        time_range=time_range,
        safe=safe,
        language=language,
        country=country,
        site=site,
        lens=lens,
        exact_terms=exact_terms,
        exclude_terms=exclude_terms,
        provider=provider,
        claim=claim,
        session_id=session,
    )
    found = _run(ctx, rs.WebSearchResult, lambda web: web.search(request))
    if _emit(ctx, json_output, found):
        return
    for number, hit in enumerate(found.results, start=1):
        out.print(_strong(f"{number}. {_shown(hit.title)}"))
        out.print(f"   {_shown(hit.url)}")
        if hit.snippet:
            out.print(f"   {_shown(hit.snippet)}", style="dim")
        if hit.claim_signal:
            out.print(f"   claim: {_shown(hit.claim_signal)}", style="green")
    for note in found.notes or []:
        out.print(f"note: {_shown(note)}", style="yellow")
    _print_hints("No results", found.hints)


@web_app.command("scrape")
@handles_errors
def scrape(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The http(s) URL to read.")],
    mode: Annotated[str, typer.Option(help="full, preview or raw.")] = "full",
    max_length: Annotated[
        int, typer.Option("--max-length", help="Byte cap on content (at most 5000000).")
    ] = rq.DEFAULT_SCRAPE_BYTES,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Read a page or document (the scrape_page tool)."""
    request = cli_build(
        ctx, rq.ScrapePageRequest, url=url, mode=mode, max_length=max_length, session_id=session
    )
    page = _run(ctx, rs.ScrapePageResult, lambda web: web.scrape(request))
    if _emit(ctx, json_output, page):
        return
    echo(page.content)
    state = " (truncated)" if page.truncated else ""
    echo(f"\n-- {page.content_type}, {page.content_length} bytes{state}", err=True)
    echo(f"-- {page.citation.formatted.apa}", err=True)


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
    ] = rq.DEFAULT_SCRAPE_BYTES,
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
    request = cli_build(
        ctx,
        rq.SearchAndScrapeRequest,
        query=query,
        num_results=num_results,
        deduplicate=dedup,
        max_length_per_source=per_source,
        total_max_length=total,
        filter_by_query=filter_by_query,
        provider=provider,
        claim=claim,
        session_id=session,
    )
    combined = _run(ctx, rs.SearchAndScrapeResult, lambda web: web.search_and_scrape(request))
    if _emit(ctx, json_output, combined):
        return
    for number, source in enumerate(combined.sources, start=1):
        score = source.scores.overall
        out.print(_strong(f"[{number}] {_shown(source.title)}", f" ({score:.2f})"))
        out.print(f"    {_shown(source.url)}")
        if source.claim_signal:
            out.print(f"    claim: {_shown(source.claim_signal)}", style="green")
    for failure in combined.scrape_failures:
        out.print(f"failed: {_shown(failure.url)}: {_shown(failure.reason)}", style="yellow")
    summary = combined.summary
    out.print(
        f"{combined.status}: {summary.urls_scraped} of {summary.urls_searched} pages read, "
        f"{summary.urls_failed} failed"
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
    request = cli_build(
        ctx,
        rq.AcademicSearchRequest,
        query=query,
        num_results=num_results,
        year_from=year_from,
        year_to=year_to,
        source=source,
        open_access=open_access,
        pdf_only=pdf_only,
        sort_by=sort_by,
        provider=provider,
        session_id=session,
    )
    found = _run(ctx, rs.AcademicSearchResult, lambda web: web.academic_search(request))
    if _emit(ctx, json_output, found):
        return
    for number, paper in enumerate(found.papers, start=1):
        year = f" ({paper.year})" if paper.year else ""
        out.print(_strong(f"{number}. {_shown(paper.title)}", year))
        if paper.ref:
            out.print(f"   ref: {_shown(paper.ref)}")
        if paper.pdf_url:
            out.print(f"   pdf: {_shown(paper.pdf_url)}", style="green")
        if paper.retraction_status is not None and paper.retraction_status.retracted:
            out.print("   RETRACTED", style="bold red")
    out.print(f"{found.result_count} of {found.total_results} from {found.source}")


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
    provider: Annotated[str | None, typer.Option(help="One patent provider, no fallback.")] = None,
    session: SessionOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search patents (the patent_search tool)."""
    request = cli_build(
        ctx,
        rq.PatentSearchRequest,
        query=query,
        num_results=num_results,
        search_type=search_type,
        patent_office=office,
        assignee=assignee,
        inventor=inventor,
        cpc_code=cpc,
        year_from=year_from,
        year_to=year_to,
        provider=provider,
        session_id=session,
    )
    found = _run(ctx, rs.PatentSearchResult, lambda web: web.patent_search(request))
    if _emit(ctx, json_output, found):
        return
    for patent in found.patents:
        out.print(_strong(_shown(patent.number), f" {_shown(patent.title)}"))
        dates = ", ".join(
            f"{name} {day}"
            for name, day in (("filed", patent.filed), ("granted", patent.granted))
            if day
        )
        out.print(f"    {_shown(patent.assignee or '')} {dates}".rstrip())
        out.print(f"    {_shown(patent.url)}", style="dim")
    for cluster in found.assignee_clusters or []:
        out.print(f"  {cluster.count:3d}  {_shown(cluster.assignee)}")
    _print_hints("No patents", found.hints)


def _print_hints(nothing: str, hints: rs.ZeroResultHints | None) -> None:
    if hints is not None:
        out.print(f"{nothing} ({hints.reason}). Try: " + "; ".join(hints.suggested_actions))


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
    request = cli_build(
        ctx,
        rq.ResearchStepRequest,
        search_step=step,
        step_number=number,
        next_step_needed=more,
        session_id=session,
        research_goal=goal,
        reasoning=reasoning,
        confidence=confidence,
        revises_step=revises,
        branch_from_step=branch_from,
        branch_id=branch_id,
        knowledge_gap=gap,
    )
    recorded = _run(ctx, rs.StepRecorded, lambda web: web.research_step(request))
    if _emit(ctx, json_output, recorded):
        return
    state = "complete" if recorded.is_complete else "open"
    out.print(f"session {recorded.session_id}: step {recorded.current_step} recorded ({state})")


@research_app.command("show")
@handles_errors
def research_show(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="Session id.")],
    step: Annotated[int | None, typer.Option("--step", help="One step only.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Read a research session (the get_research_session tool)."""
    request = cli_build(ctx, rq.ResearchSessionRequest, session_id=session, step_id=step)
    view = _run(ctx, rs.WebResult, lambda web: web.research_session(request))
    if _emit(ctx, json_output, view):
        return
    if isinstance(view, rs.OneStep):
        out.print(_strong(_shown(view.research_goal), f" ({session})"))
        out.print(json.dumps(view.step.wire(), ensure_ascii=False, indent=2))
        return
    if not isinstance(view, rs.SessionSummary):
        raise TypeError(f"unexpected session view {type(view).__name__}")
    out.print(_strong(_shown(view.research_goal), f" ({session})"))
    for item in view.step_index:
        note = f" (superseded by {item.superseded_by})" if item.superseded_by else ""
        branch = f"[{item.branch_id}]"
        out.print(f"{item.step_number}. {branch} {_shown(item.one_liner)}{note}")
    for gap in view.gaps:
        out.print(f"gap (step {gap.found_in_step}): {_shown(gap.gap)}", style="yellow")
    for source in view.sources:
        out.print(f"- {_shown(source.title)} {_shown(source.url)}")


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
    request = cli_build(
        ctx, rq.ResearchExportRequest, session_id=session, format=format_, verify_links=verify_links
    )
    exported = _run(ctx, rs.ResearchExportResult, lambda web: web.research_export(request))
    if _emit(ctx, json_output, exported):
        return
    echo(exported.document)
