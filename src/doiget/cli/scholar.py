"""``doiget scholar``: arXiv, Semantic Scholar and PubMed from the command line.

``doiget scholar arxiv|s2|pubmed search QUERY``, ``... get ID``, ``... bib ID`` and
``doiget scholar s2 citations ID``. Tables for people; ``--json`` prints exactly the
text the matching MCP tool returns (a JSON array or object), BibTeX is printed as is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel

from doiget.cli.output import (
    JsonFlag,
    cli_build,
    console,
    echo,
    emit_json,
    handles_errors_as,
    run_closing,
    runtime,
    table,
    wants_json,
)
from doiget.contract import Request, plain
from doiget.envelopes import SCHOLAR_ENVELOPE
from doiget.scholar import contracts as c

if TYPE_CHECKING:  # the scholar core (network) loads only when a command runs
    from doiget.scholar.service import Scholar

# Errors in the scholar tools' shape.
handles_errors = handles_errors_as(SCHOLAR_ENVELOPE)

T = TypeVar("T")
LookupT = TypeVar("LookupT", bound=Request)
Query = Annotated[str, typer.Argument(help="What to search for.")]
MaxResults = Annotated[
    int, typer.Option("--max", "-n", min=1, max=100, help="At most this many results (1-100).")
]
FromYear = Annotated[int | None, typer.Option("--from", help="Earliest year, inclusive.")]
ToYear = Annotated[int | None, typer.Option("--to", help="Latest year, inclusive.")]
Identifier = Annotated[str, typer.Argument(help="The paper's id, in any of the forms above.")]

out = console()
scholar_app = typer.Typer(
    help="Search and look up papers on arXiv, Semantic Scholar and PubMed.",
    no_args_is_help=True,
)
arxiv_app = typer.Typer(help="arXiv: search, get, bib.", no_args_is_help=True)
s2_app = typer.Typer(help="Semantic Scholar: search, get, citations, bib.", no_args_is_help=True)
pubmed_app = typer.Typer(help="PubMed: search, get, bib.", no_args_is_help=True)
scholar_app.add_typer(arxiv_app, name="arxiv")
scholar_app.add_typer(s2_app, name="s2")
scholar_app.add_typer(pubmed_app, name="pubmed")


def _run(ctx: typer.Context, work: Callable[[Scholar], Awaitable[T]]) -> T:
    from doiget.scholar.service import Scholar

    scholar = Scholar(runtime(ctx))
    return run_closing(scholar, work, runtime(ctx))


def _authors(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" +{len(names) - 3}" if len(names) > 3 else "")


def _show_list(
    ctx: typer.Context, json_output: bool, found: Sequence[BaseModel], id_field: str
) -> None:
    rows: list[dict[str, Any]] = plain(list(found))
    if wants_json(ctx, json_output):
        emit_json(rows)
        return
    grid = table(id_field, "year", "title", "authors", "ref")
    for row in rows:
        authors = [a["name"] if isinstance(a, dict) else a for a in row.get("authors", [])]
        year = row.get("year") or str(row.get("published", ""))[:4]
        grid.add_row(
            str(row[id_field]),
            str(year or ""),
            str(row.get("title") or "")[:90],
            _authors(authors),
            row.get("ref") or "",
        )
    out.print(grid)
    out.print(f"{len(rows)} result(s)")


def _show_one(ctx: typer.Context, json_output: bool, found: BaseModel) -> None:
    row: dict[str, Any] = plain(found)
    if wants_json(ctx, json_output):
        emit_json(row)
        return
    grid = table("key", "value", show_header=False)
    for key, value in row.items():
        if isinstance(value, list):
            value = "; ".join(v["name"] if isinstance(v, dict) else str(v) for v in value)
        grid.add_row(key, "" if value is None else str(value))
    out.print(grid)


def _print_bibtex(text: str) -> None:
    echo(text, nl=not text.endswith("\n"))


def _year_range_search(
    search: Callable[[Scholar, c.ScholarSearch], Awaitable[Sequence[BaseModel]]],
    id_field: str,
    doc: str,
) -> Callable[[typer.Context, str, int, int | None, int | None, bool], None]:
    """A ``search`` command for an upstream whose only filters are years."""

    @handles_errors
    def command(
        ctx: typer.Context,
        query: Query,
        max_results: MaxResults = 10,
        start_year: FromYear = None,
        end_year: ToYear = None,
        json_output: JsonFlag = False,
    ) -> None:
        request = cli_build(
            ctx,
            c.ScholarSearch,
            query=query,
            max_results=max_results,
            start_year=start_year,
            end_year=end_year,
        )
        _show_list(ctx, json_output, _run(ctx, lambda s: search(s, request)), id_field)

    command.__doc__ = doc
    return command


def _lookup(ctx: typer.Context, model: type[LookupT], identifier: str) -> LookupT:
    """The lookup request of ``model`` (its one field) for ``identifier``."""
    (field,) = model.model_fields
    return cli_build(ctx, model, **{field: identifier})


def _get_command(
    get: Callable[[Scholar, LookupT], Awaitable[BaseModel]], model: type[LookupT], doc: str
) -> Callable[[typer.Context, str, bool], None]:
    """A ``get`` command: one paper by identifier, as a table or the tool's JSON."""

    @handles_errors
    def command(ctx: typer.Context, identifier: Identifier, json_output: JsonFlag = False) -> None:
        request = _lookup(ctx, model, identifier)
        _show_one(ctx, json_output, _run(ctx, lambda s: get(s, request)))

    command.__doc__ = doc
    return command


def _bib_command(
    bib: Callable[[Scholar, LookupT], Awaitable[str]], model: type[LookupT], doc: str
) -> Callable[[typer.Context, str], None]:
    """A ``bib`` command: the BibTeX entry of one paper, printed as is."""

    @handles_errors
    def command(ctx: typer.Context, identifier: Identifier) -> None:
        request = _lookup(ctx, model, identifier)
        _print_bibtex(_run(ctx, lambda s: bib(s, request)))

    command.__doc__ = doc
    return command


# -- arXiv ---------------------------------------------------------------------------


@arxiv_app.command("search")
@handles_errors
def arxiv_search(
    ctx: typer.Context,
    query: Query,
    max_results: MaxResults = 10,
    start_year: FromYear = None,
    end_year: ToYear = None,
    author: Annotated[str | None, typer.Option("--author", help="Author name.")] = None,
    sort: Annotated[
        str,
        typer.Option("--sort", help="relevance, lastUpdatedDate or submittedDate."),
    ] = "relevance",
    json_output: JsonFlag = False,
) -> None:
    """Search arXiv (arXiv query syntax such as 'ti:x AND cat:cs.CL' passes through)."""
    request = cli_build(
        ctx,
        c.ArxivSearch,
        query=query,
        max_results=max_results,
        start_year=start_year,
        end_year=end_year,
        author=author,
        sort_by=sort,
    )
    _show_list(ctx, json_output, _run(ctx, lambda s: s.search_arxiv(request)), "id")


arxiv_app.command("get")(
    _get_command(
        lambda s, r: s.get_arxiv_paper(r),
        c.ArxivLookup,
        "One arXiv paper (2301.12345, arXiv:2301.12345v2, hep-th/9901001).",
    )
)
arxiv_app.command("bib")(
    _bib_command(lambda s, r: s.arxiv_to_bibtex(r), c.ArxivLookup, "BibTeX for one arXiv paper.")
)


# -- Semantic Scholar ----------------------------------------------------------------


s2_app.command("search")(
    _year_range_search(
        lambda s, r: s.search_semantic_scholar(r), "paperId", "Search Semantic Scholar."
    )
)
s2_app.command("get")(
    _get_command(
        lambda s, r: s.get_semantic_scholar_paper(r),
        c.SemanticScholarLookup,
        "One paper by S2 id, DOI, arXiv id or prefixed id (CorpusId:, PMID:, ...).",
    )
)


@s2_app.command("citations")
@handles_errors
def s2_citations(
    ctx: typer.Context,
    identifier: Identifier,
    max_results: MaxResults = 10,
    json_output: JsonFlag = False,
) -> None:
    """Papers citing one paper."""
    request = cli_build(ctx, c.CitingPapers, paper_id=identifier, max_results=max_results)
    _show_list(ctx, json_output, _run(ctx, lambda s: s.get_paper_citations(request)), "paperId")


s2_app.command("bib")(
    _bib_command(
        lambda s, r: s.semantic_scholar_to_bibtex(r),
        c.SemanticScholarLookup,
        "BibTeX for one Semantic Scholar paper.",
    )
)


# -- PubMed --------------------------------------------------------------------------


pubmed_app.command("search")(
    _year_range_search(
        lambda s, r: s.search_pubmed(r),
        "pmid",
        "Search PubMed (MeSH and field tags such as 'diabetes[MeSH]' pass through).",
    )
)
pubmed_app.command("get")(
    _get_command(lambda s, r: s.get_pubmed_paper(r), c.PubmedLookup, "One PubMed record by PMID.")
)
pubmed_app.command("bib")(
    _bib_command(
        lambda s, r: s.pubmed_to_bibtex(r),
        c.PubmedLookup,
        "BibTeX for one PubMed record (key pmid<PMID>).",
    )
)
