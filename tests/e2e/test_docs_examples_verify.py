"""The tool reference's examples of checking references, claims, quotations and a
draft give, against the replay upstream, the results the reference shows.

The user adds two PDFs they have: LongEval (identified by its title in Crossref), read
and quoted, and the OpenQuestion draft (no record anywhere, so a ``local:`` ref), whose
four pages the claim is weighed against; a 20-page paper would take the claim engine
most of a work's time limit on a busy machine. The other works are the draft tests'
(draftsutil)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from claimsutil import JOSE_PDF, PDFS
from docsexamples import WORK, check_group
from draftsutil import CSL, GLACIERS, LONGEVAL, longeval_record
from verifyutil import route_chain_of_thought

from papersutil import route_pnas
from replay import FIXTURES, ReplayUpstream, Reply

JSON = {"Content-Type": "application/json"}
# What the draft cites: Makris et al. (PNAS, its abstract in Crossref's record) and a
# work no index holds.
CITED = ("makris", "ghost")
DRAFT = f"""---
title: Stiffer tissues
bibliography: refs.json
---

Enhancing collagen cross-linking improves the mechanical properties of engineered tissues
[@makris].
{GLACIERS} [@ghost].
"""


def _route(upstream: ReplayUpstream) -> None:
    """Crossref holds LongEval and finds it by its title; the rest as the draft tests."""
    route_chain_of_thought(upstream)
    route_pnas(upstream)
    record = longeval_record()
    upstream.json("api.crossref.org", f"/works/{LONGEVAL}", record)
    nothing = json.loads(
        (FIXTURES / "crossref/works-query.title-gibberish-zero-results.json").read_text()
    )
    listed = {"total-results": 1, "items": [record["message"]]}
    found = {**nothing, "message": {**nothing["message"], **listed}}

    def search(query: dict[str, str]) -> Reply:
        asked = " ".join(query.values()).lower()
        answer = found if "longeval" in asked else nothing
        return Reply(200, json.dumps(answer).encode(), JSON)

    upstream.responder("api.crossref.org", "/works", search)


def _user_files(folder: Path) -> None:
    folder.mkdir()
    shutil.copyfile(PDFS / "acl-2023.eacl-main.121-longeval.pdf", folder / "longeval.pdf")
    shutil.copyfile(JOSE_PDF, folder / "openquestion.pdf")
    (folder / "refs.json").write_text(json.dumps([item for item in CSL if item["id"] in CITED]))
    (folder / "draft.md").write_text(DRAFT)


async def test_verify_examples_give_their_documented_results(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    _route(upstream)
    _user_files(tmp_path / WORK)
    env = {**doiget_env, "DOIGET_IMPORT_DIRS": str(tmp_path / WORK)}
    await check_group("verify", env, tmp_path)
