"""doiget_audit_manuscript reads a manuscript only inside the client's roots or
DOIGET_IMPORT_DIRS, as doiget_add_pdf reads PDFs; a refusal reaches no upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcputil import call, with_roots

from replay import ReplayUpstream

DRAFT = "Glaciers retreat \\cite{doe}.\n\\bibliography{refs}\n"


def _drafts(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A root, a draft outside it, and a link inside it leading to that draft."""
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    outside = elsewhere / "draft.tex"
    outside.write_text(DRAFT)
    link = root / "linked.tex"
    link.symlink_to(outside)
    return root, outside, link


async def test_a_draft_outside_the_roots_is_refused_by_path_or_by_link(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    root, outside, link = _drafts(tmp_path)

    async def work(session: ClientSession) -> list[dict[str, Any]]:
        return [
            await call(session, "doiget_audit_manuscript", {"path": str(path)})
            for path in (outside, link, root / ".." / "elsewhere" / "draft.tex")
        ]

    for refused in await with_roots(doiget_env, [root], work):
        assert refused["ok"] is False
        assert refused["error"]["code"] == "CAPABILITY_DENIED"
        message = refused["error"]["message"]
        assert "read manuscripts from" in message
        assert "roots" in message and "DOIGET_IMPORT_DIRS" in message
    assert upstream.requests == []


async def test_a_client_without_roots_reads_only_from_doiget_import_dirs(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    _, outside, _ = _drafts(tmp_path)

    async def work(session: ClientSession) -> dict[str, Any]:
        return await call(session, "doiget_audit_manuscript", {"path": str(outside)})

    refused = await with_roots(doiget_env, [], work)
    assert refused["error"]["code"] == "CAPABILITY_DENIED"
    assert "none declared" in refused["error"]["message"]
    assert upstream.requests == []
