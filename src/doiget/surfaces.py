"""The two faces of doiget and how a next step is named on each.

An agent calls tools; a person runs commands. Messages that name what to do next
are written once, in the agent's words; the command line shows each tool name as the
command that does the same (see :data:`TOOL_COMMANDS`), and "``tool`` with
``field=value``" as that command with its option (see :data:`TOOL_OPTIONS`). Advice
is written with :func:`call_with`, so it always takes the form the command line reads.
"""

from __future__ import annotations

import re
from typing import Final

# Each MCP tool and the command that does the same from the shell (store_chunks has
# none: passages are stored from the shell by ``doiget index``).
TOOL_COMMANDS: Final = {
    "doiget_resolve_paper": "doiget resolve",
    "doiget_fetch_paper": "doiget fetch",
    "doiget_metadata_only": "doiget metadata",
    "doiget_batch_fetch": "doiget batch",
    "doiget_info": "doiget info",
    "doiget_search_local": "doiget search",
    "doiget_list_recent": "doiget recent",
    "doiget_paper_pdf_path": "doiget pdf-path",
    "doiget_capability_profile": "doiget capabilities",
    "doiget_health": "doiget health",
    "doiget_expand_citation_graph": "doiget graph",
    "doiget_bibtex_export": "doiget bib",
    "doiget_csl_export": "doiget csl",
    "doiget_format_references": "doiget cite",
    "doiget_read_paper": "doiget read",
    "doiget_check_quote": "doiget quote",
    "doiget_verify_references": "doiget verify",
    "doiget_check_claims": "doiget claim",
    "doiget_audit_manuscript": "doiget audit",
    "doiget_add_pdf": "doiget add",
    "doiget_import_bibliography": "doiget import",
    "doiget_zotero_search": "doiget zotero search",
    "doiget_zotero_add": "doiget zotero add",
    "doiget_zotero_sync": "doiget zotero sync",
    "search_arxiv": "doiget scholar arxiv search",
    "get_arxiv_paper": "doiget scholar arxiv get",
    "arxiv_to_bibtex": "doiget scholar arxiv bib",
    "search_semantic_scholar": "doiget scholar s2 search",
    "get_semantic_scholar_paper": "doiget scholar s2 get",
    "get_paper_citations": "doiget scholar s2 citations",
    "semantic_scholar_to_bibtex": "doiget scholar s2 bib",
    "search_pubmed": "doiget scholar pubmed search",
    "get_pubmed_paper": "doiget scholar pubmed get",
    "pubmed_to_bibtex": "doiget scholar pubmed bib",
    "list_projects": "doiget projects list",
    "find_chunks": "doiget query",
    "query_hybrid": "doiget query --hybrid",
    "inspect_collection": "doiget projects inspect",
    "index_papers": "doiget index",
    "web_search": "doiget web search",
    "scrape_page": "doiget web scrape",
    "search_and_scrape": "doiget web search-and-scrape",
    "academic_search": "doiget web papers",
    "patent_search": "doiget web patents",
    "sequential_search": "doiget web research step",
    "get_research_session": "doiget web research show",
    "research_export": "doiget web research export",
}

# A tool's argument that advice names, and the option its command takes it by.
TOOL_OPTIONS: Final = {
    ("index_papers", "create"): "--create",
    ("index_papers", "force_rebuild"): "--force-rebuild",
    ("index_papers", "project"): "--project",
}

_NAMES: Final = "|".join(sorted(TOOL_COMMANDS, key=len, reverse=True))
_TOOL_NAME: Final = re.compile(r"\b(" + _NAMES + r")\b")
# One ``field=value``; the value ends before trailing punctuation and a space, a quote
# or the end (it may hold dots itself: a project id).
_ARGUMENT: Final = r"\w+=[^\s,;\"'`]+?"
_TOOL_WITH: Final = re.compile(
    rf"\b({_NAMES}) with ({_ARGUMENT}(?: and {_ARGUMENT})*)(?=[.,;)]*(?:[\s\"'`]|$))"
)


def call_with(tool: str, **arguments: str) -> str:
    """Advice to call ``tool`` with ``arguments``, in the form both faces read: an agent
    sees ``tool with a=1 and b=2``, a person the command with its options."""
    given = " and ".join(f"{field}={value}" for field, value in arguments.items())
    return f"{tool} with {given}"


def _as_options(match: re.Match[str]) -> str:
    tool, given = match.groups()
    command = TOOL_COMMANDS[tool]
    for argument in given.split(" and "):
        field, _, value = argument.partition("=")
        option = TOOL_OPTIONS.get((tool, field))
        if option is None:  # the command has no such option: name the command alone
            return f"`{command}`"
        command += f" {option}" if value == "true" else f" {option} {value}"
    return f"`{command}`"


def for_command_line(text: str) -> str:
    """``text`` with every tool name it mentions said as its command (`doiget ...`),
    and a tool's argument as the command's option."""
    text = _TOOL_WITH.sub(_as_options, text)
    return _TOOL_NAME.sub(lambda match: f"`{TOOL_COMMANDS[match.group(1)]}`", text)
