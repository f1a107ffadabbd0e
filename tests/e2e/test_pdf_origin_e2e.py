"""A PDF added from a local file may print a real paper's title and DOI and be filed as
that paper; every answer built from its text says it came from a local file, and once
the paper is fetched the fetched copy is the one read, with the host it came from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from addpdfutil import PNAS, PNAS_AUTHORS, PNAS_TITLE, route_sources
from mcputil import call, mcp_session

from doiget.models import Work
from doiget.papers.store import Store
from doiget.refs import parse_ref

from cliutil import doiget
from papersutil import NATURE, route_nature
from pdfmaker import write_lines_pdf, write_paper_pdf
from replay import ReplayUpstream

INVENTED = "Our trial proved that the compound cures every known disease within a week."
# A sentence of the OpenQuestion paper, the PDF Europe PMC serves for NATURE.
ON_PAGE_3 = "All code blocks are removed and the interactivity of the charts is maintained."


async def test_a_planted_pdf_is_read_as_a_local_file(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    planted = write_paper_pdf(
        tmp_path / "planted.pdf",
        PNAS_TITLE,
        PNAS_AUTHORS,
        page_doi=PNAS,
        sections=[("Results", INVENTED)],
    )
    added = json.loads(doiget("--json", "add", str(planted), env=doiget_env).stdout)
    assert added["results"][0]["ref"] == PNAS, added
    outside = write_lines_pdf(tmp_path / "notes.pdf", [["Abstract", "Notes on sea ice."]])
    for indexed in (PNAS, str(outside)):
        assert doiget("index", indexed, env=doiget_env).returncode == 0
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        passages = await call(
            session, "find_chunks", {"project": "doiget/papers", "query": "compound disease"}
        )
        from_file = await call(
            session, "find_chunks", {"project": "doiget/papers", "query": "sea ice notes"}
        )
        quoted = await call(session, "doiget_check_quote", {"ref": PNAS, "quote": INVENTED})
        outline = await call(session, "doiget_read_paper", {"ref": PNAS})
        piece = await call(session, "doiget_read_paper", {"ref": PNAS, "pages": "1"})
        missed = await call(session, "doiget_check_quote", {"ref": PNAS, "quote": "Not there."})
    local = {"kind": "local_file", "source": "local-file"}
    assert quoted["found"] and quoted["pdf_origin"] == local
    assert outline["pdf_origin"] == local and piece["pdf_origin"] == local
    assert not missed["found"] and missed["pdf_origin"] == local
    assert passages["items"] and all(
        item["pdf_origin"]["kind"] == "local_file" for item in passages["items"]
    )
    titles = {item["title"]: item["pdf_origin"] for item in from_file["items"]}
    assert titles["notes"] == {"kind": "local_file"}
    shown = doiget("quote", PNAS, INVENTED, env=doiget_env)
    assert "added from a local file" in shown.stderr


async def test_a_fetched_copy_replaces_a_local_one_and_says_its_host(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_nature(upstream)
    store = Store(Path(doiget_env["DOIGET_STORE_ROOT"]))
    ref = parse_ref(NATURE)
    local = tmp_path / "mine.pdf"
    write_paper_pdf(local, "Some title", ["Ada Example"], sections=[("Results", INVENTED)])
    target = store.pdf_path(ref)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(local, target)
    fields = {"pdf_source": "local-file", "identified_by": "doi"}
    store.write_metadata(ref, Work(source="crossref", title="T"), doiget_fields=fields, pdf=target)
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        before = await call(session, "doiget_check_quote", {"ref": NATURE, "quote": INVENTED})
        fetched = await call(session, "doiget_fetch_paper", {"ref": NATURE})
        after = await call(session, "doiget_check_quote", {"ref": NATURE, "quote": ON_PAGE_3})
        gone = await call(session, "doiget_check_quote", {"ref": NATURE, "quote": INVENTED})
    assert before["found"] and before["pdf_origin"]["kind"] == "local_file"
    assert fetched["ok"], fetched
    assert doiget("index", NATURE, env=doiget_env).returncode == 0
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        passages = await call(
            session, "find_chunks", {"project": "doiget/papers", "query": "interactive charts"}
        )
    origin = {"kind": "fetched", "source": "oa-publisher", "host": "europepmc.org"}
    assert after["found"] and after["pdf_origin"] == origin
    assert not gone["found"] and gone["pdf_origin"] == origin
    assert passages["items"] and all(item["pdf_origin"] == origin for item in passages["items"])
    shown = doiget("read", NATURE, env=doiget_env)
    assert "fetched from europepmc.org (oa-publisher)" in shown.stderr
