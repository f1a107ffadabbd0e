"""The ``doiget`` command."""

from __future__ import annotations

from typing import Annotated

import typer

from doiget import __version__
from doiget.cli.adding import add
from doiget.cli.audit import audit
from doiget.cli.claims import claim
from doiget.cli.helptext import tidy
from doiget.cli.imports import import_
from doiget.cli.integrity import integrity
from doiget.cli.library import index, projects_app, query
from doiget.cli.output import JSON_OPTION_HELP, state
from doiget.cli.papers import COMMANDS as PAPERS_COMMANDS
from doiget.cli.reading import quote, read
from doiget.cli.scholar import scholar_app
from doiget.cli.serve import serve
from doiget.cli.system import capabilities, health
from doiget.cli.verify import verify
from doiget.cli.web import web_app
from doiget.cli.zotero import zotero_app

app = typer.Typer(
    name="doiget",
    help="Resolve DOIs and arXiv ids, fetch Open Access PDFs, and cite them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"doiget {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    json_output: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Say more on stderr: the capability banner first."),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """doiget: a research server for AI agents, and its command line."""
    state(ctx).json = json_output
    state(ctx).verbose = verbose


app.command("capabilities")(capabilities)
app.command("health")(health)
app.command("serve")(serve)
for _name, _command in PAPERS_COMMANDS.items():
    app.command(_name)(_command)
app.command("add")(add)
app.command("verify")(verify)
app.command("audit")(audit)
app.command("claim")(claim)
app.command("import")(import_)
app.command("integrity")(integrity)
app.command("read")(read)
app.command("quote")(quote)
app.add_typer(scholar_app, name="scholar")
app.add_typer(projects_app, name="projects")
app.add_typer(web_app, name="web")
app.add_typer(zotero_app, name="zotero")
app.command("index")(index)
app.command("query")(query)
tidy(app)
