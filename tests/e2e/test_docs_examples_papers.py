"""The tool reference's examples of the papers toolset give, against the replay
upstream, the results the reference shows."""

from __future__ import annotations

from pathlib import Path

from addpdfutil import PNAS, PNAS_AUTHORS, PNAS_TITLE
from docsexamples import WORK, check_group
from test_mcp_server import route_arxiv

from papersutil import route_closed, route_nature, route_pnas
from pdfmaker import write_paper_pdf
from replay import ReplayUpstream

PEERJ = "10.7717/peerj.4375"


async def test_papers_examples_give_their_documented_results(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_nature(upstream)
    route_pnas(upstream)
    route_closed(upstream)
    route_arxiv(upstream)
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{PEERJ}", "openalex/works-W2741809807-2026.json"
    )
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-filter-cites-W2741809807-page1-per50.json"
    )
    # The user's own copy of the PNAS paper, which no allowlisted host serves.
    work = tmp_path / WORK
    work.mkdir()
    write_paper_pdf(work / "makris2014.pdf", PNAS_TITLE, PNAS_AUTHORS, page_doi=PNAS)
    # The citation graph needs OpenAlex; a client without roots adds PDFs from
    # DOIGET_IMPORT_DIRS only.
    env = {**doiget_env, "DOIGET_ENABLE_OPENALEX": "1", "DOIGET_IMPORT_DIRS": str(work)}
    await check_group("papers", env, tmp_path)
