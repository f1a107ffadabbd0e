"""Adding local PDFs over MCP (a client that declares its roots) and from the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from addpdfutil import PNAS, PNAS_AUTHORS, PNAS_TITLE, route_sources
from mcp.client.session import ClientSession
from mcputil import call, with_roots

from cliutil import doiget
from pdfmaker import write_paper_pdf
from replay import ReplayUpstream


async def test_an_agent_adds_a_pdf_from_a_declared_root_and_cites_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    root, elsewhere = tmp_path / "papers", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    mine = write_paper_pdf(root / "mine.pdf", PNAS_TITLE, PNAS_AUTHORS, page_doi=PNAS)
    other = write_paper_pdf(elsewhere / "other.pdf", PNAS_TITLE, PNAS_AUTHORS, page_doi=PNAS)
    (root / "escape.pdf").symlink_to(other)

    async def work(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        hints = tools["doiget_add_pdf"].annotations
        assert hints is not None and hints.read_only_hint is False and hints.idempotent_hint
        added = await call(session, "doiget_add_pdf", {"paths": [str(root)]})
        rows = {Path(row["path"]).name: row for row in added["results"]}
        assert rows["mine.pdf"]["ref"] == PNAS and rows["mine.pdf"]["identified"]
        assert rows["escape.pdf"]["error"]["code"] == "CAPABILITY_DENIED"
        refused = await call(session, "doiget_add_pdf", {"paths": [str(other)]})
        message = refused["results"][0]["error"]["message"]
        assert "roots" in message and "DOIGET_IMPORT_DIRS" in message
        info = await call(session, "doiget_info", {"ref": PNAS})
        assert info["pdf_path"] and info["metadata"]["doiget"]["pdf_source"] == "local-file"
        bib = await call(session, "doiget_format_references", {"refs": [PNAS], "style": "bibtex"})
        assert "Makris" in bib["text"]
        again = await call(session, "doiget_add_pdf", {"paths": [str(mine)]})
        assert again["results"][0]["status"] == "already_present"

    await with_roots(doiget_env, [root], work)


async def test_a_client_without_roots_adds_only_from_doiget_import_dirs(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    folder = tmp_path / "imports"
    folder.mkdir()
    pdf = write_paper_pdf(folder / "u.pdf", "Untitled Musings on Nothing", ["Ann Other"])

    async def work(session: ClientSession) -> Any:
        return await call(session, "doiget_add_pdf", {"paths": [str(pdf)]})

    refused = await with_roots(doiget_env, [], work)
    assert refused["results"][0]["error"]["code"] == "CAPABILITY_DENIED"
    allowed = await with_roots({**doiget_env, "DOIGET_IMPORT_DIRS": str(folder)}, [], work)
    row = allowed["results"][0]
    assert row["ok"] and row["identified"] is False and row["ref"].startswith("local:")


def test_the_command_line_adds_a_folder_and_prints_the_tools_document(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_sources(upstream)
    folder = tmp_path / "mine"
    (folder / "sub").mkdir(parents=True)
    write_paper_pdf(folder / "a.pdf", PNAS_TITLE, PNAS_AUTHORS, xmp_doi=PNAS)
    write_paper_pdf(folder / "sub" / "b.PDF", "Untitled Musings on Nothing", ["Ann Other"])
    (folder / "notes.txt").write_text("not a pdf, not walked")
    shown = doiget("add", str(folder), env=doiget_env)
    assert shown.returncode == 0 and "1 identified, 1 unidentified" in shown.stdout
    document = json.loads(doiget("--json", "add", str(folder), env=doiget_env).stdout)
    assert [row["status"] for row in document["results"]] == ["already_present"] * 2
    assert document["summary"] == {"total": 2, "identified": 1, "unidentified": 1, "failed": 0}
    missing = doiget("add", str(tmp_path / "nope.pdf"), env=doiget_env)
    assert missing.returncode == 1 and "NOT_FOUND" in missing.stdout
