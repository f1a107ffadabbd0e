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
from doiget.web.params import DEFAULT_SCRAPE_BYTES, SCRAPE_PAGE, SEARCH_AND_SCRAPE, WEB_SEARCH

if TYPE_CHECKING:
    from doiget.web.outcome import Outcome
    from doiget.web.service import WebCore

# The core call behind each tool.
_METHODS: dict[str, Callable[[WebCore, Mapping[str, Any]], Awaitable[Outcome]]] = {
    "web_search": lambda web, args: web.search(args),
    "scrape_page": lambda web, args: web.scrape(args),
    "search_and_scrape": lambda web, args: web.search_and_scrape(args),
}

JsonFlag = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
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


@web_app.command("search")
@handles_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Search terms.")],
    num_results: Annotated[int, typer.Option("--num-results", "-n", help="1-10.")] = 5,
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
        },
        ("query",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for number, result in enumerate(body.get("results", []), start=1):
        out.print(f"[bold]{number}. {escape(result['title'])}[/bold]")
        out.print(f"   {escape(result['url'])}")
        if result.get("snippet"):
            out.print(f"   {escape(result['snippet'])}", style="dim")
        if result.get("claimSignal"):
            out.print(f"   claim: {escape(result['claimSignal'])}", style="green")
    for note in body.get("notes", []):
        out.print(f"note: {escape(note)}", style="yellow")
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
    json_output: JsonFlag = False,
) -> None:
    """Read a page or document (the scrape_page tool)."""
    body = _call(
        ctx,
        "scrape_page",
        SCRAPE_PAGE,
        {"url": url, "mode": mode, "max_length": max_length},
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
    num_results: Annotated[int, typer.Option("--num-results", "-n", help="1-10.")] = 3,
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
        },
        ("query",),
    )
    if _wants_json(ctx, json_output):
        emit_json(body)
        return
    for number, source in enumerate(body["sources"], start=1):
        score = source["scores"]["overall"]
        out.print(f"[bold][{number}] {escape(source['title'])}[/bold] ({score:.2f})")
        out.print(f"    {escape(source['url'])}")
        if source.get("claimSignal"):
            out.print(f"    claim: {escape(source['claimSignal'])}", style="green")
    for failure in body["scrapeFailures"]:
        out.print(f"failed: {escape(failure['url'])}: {escape(failure['reason'])}", style="yellow")
    summary = body["summary"]
    out.print(
        f"{body['status']}: {summary['urlsScraped']} of {summary['urlsSearched']} pages read, "
        f"{summary['urlsFailed']} failed"
    )
