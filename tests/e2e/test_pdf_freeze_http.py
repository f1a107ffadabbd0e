"""Over HTTP, adding PDFs built to stall a reader (unclosed XMP openers, a deflate
bomb, millions of text operators) never freezes the server: /healthz answers within
the cheap-call target while those adds run, and each is that file's answer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
from httputil import TOKEN, http_server, http_session, token_file
from mcputil import call

from bombs import pdf_flate_bomb, pdf_operators_bomb

from pdfmaker import write_paper_pdf

# A cheap call's target while heavy calls run (the freezes were 15 s to hours).
HEALTH_SECONDS = 1.0


async def test_healthz_answers_while_pdfs_built_to_stall_a_reader_are_added(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    paper = write_paper_pdf(folder / "xmp.pdf", "A Title Long Enough To Count", ["Ann Smith"])
    paper.write_bytes(paper.read_bytes() + b"<x:xmpmeta " * 15_000)
    (folder / "flate.pdf").write_bytes(pdf_flate_bomb(1 << 30))
    (folder / "operators.pdf").write_bytes(pdf_operators_bomb(3_000_000))
    env = {
        **doiget_env,
        "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN)),
        "DOIGET_IMPORT_DIRS": str(folder),
    }
    with http_server(env, tmp_path) as server:
        adds_done = asyncio.Event()
        waits: list[float] = []

        async def poll() -> None:
            async with httpx.AsyncClient(timeout=30) as client:
                while not adds_done.is_set():
                    began = time.perf_counter()
                    answer = await client.get(f"{server.base}/healthz")
                    waits.append(time.perf_counter() - began)
                    assert answer.status_code == 200
                    await asyncio.sleep(0.05)

        async def add(name: str) -> Any:
            async with http_session(server.url) as session:
                return await call(session, "doiget_add_pdf", {"paths": [str(folder / name)]})

        poller = asyncio.create_task(poll())
        try:
            added = await asyncio.gather(
                *(add(n) for n in ("xmp.pdf", "flate.pdf", "operators.pdf"))
            )
        finally:
            adds_done.set()
            await poller
    rows = {Path(doc["results"][0]["path"]).name: doc["results"][0] for doc in added}
    assert rows["xmp.pdf"]["ok"]
    for name in ("flate.pdf", "operators.pdf"):
        assert rows[name]["error"]["code"] == "INVALID_REF", rows[name]
    assert len(waits) >= 5 and max(waits) < HEALTH_SECONDS, f"slowest /healthz {max(waits):.2f} s"
