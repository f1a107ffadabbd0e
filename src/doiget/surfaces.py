"""The two faces of doiget and how a next step is named on each.

An agent calls tools; a person runs commands. Messages that name what to do next
are written once; the command line shows each tool name as the command that does
the same (see :data:`TOOL_COMMANDS`).
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
    "doiget_read_paper": "doiget read",
    "doiget_check_quote": "doiget quote",
    "doiget_verify_references": "doiget verify",
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

_TOOL_NAME: Final = re.compile(
    r"\b(" + "|".join(sorted(TOOL_COMMANDS, key=len, reverse=True)) + r")\b"
)


def for_command_line(text: str) -> str:
    """``text`` with every tool name it mentions said as its command (`doiget ...`)."""
    return _TOOL_NAME.sub(lambda match: f"`{TOOL_COMMANDS[match.group(1)]}`", text)
