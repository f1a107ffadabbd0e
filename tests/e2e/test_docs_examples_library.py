"""The tool reference's examples of the library toolset give, against the replay
upstream, the results the reference shows: a PDF of the user's, added and identified,
then indexed, searched and inspected; a note with its own vectors stored in a project
configured for them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from addpdfutil import JSON, route_title_search
from claimsutil import PDFS
from docsexamples import WORK, check_group
from draftsutil import LONGEVAL, longeval_record

from cliutil import doiget
from papersutil import PNAS, route_pnas
from replay import ReplayUpstream, Reply

LONGEVAL_PDF = PDFS / "acl-2023.eacl-main.121-longeval.pdf"
# The project of store_chunks' example: notes whose vectors the user's own encoder made.
NOTES_ENCODER = "my-lab/notes-encoder"


def _route_longeval(upstream: ReplayUpstream) -> None:
    """Crossref knows LongEval, by DOI and by its title; no other index does, and
    Unpaywall has no copy."""
    record = longeval_record()
    upstream.json("api.crossref.org", f"/works/{LONGEVAL}", record)
    route_title_search(upstream, record["message"], "faithfulness")
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-0000.0000-empty.atom")
    upstream.route("api.unpaywall.org", f"/v2/{LONGEVAL}", Reply(404, b"{}", JSON))


def _stock(env: dict[str, str], base: Path) -> None:
    """LongEval added from the user's PDF; PNAS stored without a PDF; a notes project."""
    work = base / WORK
    work.mkdir()
    shutil.copyfile(LONGEVAL_PDF, work / "longeval.pdf")
    added = doiget("--json", "add", str(work / "longeval.pdf"), env=env)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["results"][0]["ref"] == LONGEVAL
    assert doiget("metadata", PNAS, env=env).returncode == 0
    notes = doiget("projects", "add", "lab/notes", "--embed-model", NOTES_ENCODER, env=env)
    assert notes.returncode == 0, notes.stderr


async def test_library_examples_give_their_documented_results(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    _route_longeval(upstream)
    route_pnas(upstream)
    _stock(doiget_env, tmp_path)
    await check_group("library", doiget_env, tmp_path)
