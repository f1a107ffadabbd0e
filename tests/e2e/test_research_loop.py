"""The read-and-cite loop with MCP tools only, on a fresh library: a PDF added from a
root the client declares is identified, indexed, found, quoted, read and cited, and
the paper's retraction is shown at every step."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from integrityutil import SAID, WAKEFIELD, route_integrity
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcputil import call

from cliutil import clean_env
from pdfmaker import write_paper_pdf
from replay import ReplayUpstream

TITLE = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive "
    "developmental disorder in children"
)
AUTHORS = ["AJ Wakefield", "SH Murch", "A Anthony", "J Linnell"]
QUOTED = "Twelve children were referred to a paediatric gastroenterology unit."
METHODS = (
    QUOTED + " Each child underwent a full clinical review under sedation. "
    "Biopsies were taken and read by a pathologist who did not know the history. "
) * 3
RETRACTED = "retraction"


def _retracted(shown: dict[str, Any]) -> bool:
    return any(notice["kind"] == RETRACTED for notice in shown.get("integrity") or [])


async def test_add_identify_index_find_quote_read_and_cite_with_the_retraction_shown(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_integrity(upstream)
    empty = {"result": {"status": {"@code": "200"}, "hits": {"@total": "0", "@sent": "0"}}}
    upstream.json("dblp.org", "/search/publ/api", empty)
    root = tmp_path / "my-papers"
    root.mkdir()
    pdf = write_paper_pdf(
        root / "wakefield-1998.pdf",
        TITLE,
        AUTHORS,
        page_doi=WAKEFIELD,
        sections=[("Methods", METHODS), ("Findings", "Every child had a finding. " * 20)],
    )

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri())])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", "papers,library"],
        env=clean_env(doiget_env),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots) as session,
    ):
        await session.initialize()

        added = await call(session, "doiget_add_pdf", {"paths": [str(pdf)]})
        [row] = added["results"]
        assert (row["ref"], row["identified"]) == (WAKEFIELD, True), row
        assert _retracted(row), row

        indexed = await call(session, "index_papers", {"refs": [WAKEFIELD]})
        assert indexed["indexed"] == 1, indexed

        found = await call(
            session, "find_chunks", {"project": "doiget/papers", "query": "paediatric biopsies"}
        )
        assert found["count"] >= 1
        passage = found["items"][0]
        assert passage["doi"] == WAKEFIELD and _retracted(passage), passage

        quote = await call(session, "doiget_check_quote", {"ref": WAKEFIELD, "quote": QUOTED})
        assert quote["found"] is True and quote["page"] == 1, quote
        assert "Methods" in str(quote["section"]) and _retracted(quote), quote

        outline = await call(session, "doiget_read_paper", {"ref": WAKEFIELD})
        assert _retracted(outline), outline
        methods = await call(session, "doiget_read_paper", {"ref": WAKEFIELD, "section": "Methods"})
        assert QUOTED in methods["text"] and _retracted(methods)

        apa = await call(session, "doiget_format_references", {"refs": [WAKEFIELD], "style": "apa"})
        entry = apa["references"][0]
        assert "Wakefield" in entry["entry"] and SAID[WAKEFIELD] in entry["entry"], entry
        assert entry["citation"].startswith("(Wakefield")
        bib = await call(
            session, "doiget_format_references", {"refs": [WAKEFIELD], "style": "bibtex"}
        )
        assert "Retracted" in bib["text"] and "@article{" in bib["text"], bib
