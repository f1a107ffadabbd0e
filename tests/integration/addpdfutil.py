"""PDFs to add and the replay routes that identify them, shared by the tests of
``doiget add`` / ``doiget_add_pdf`` and by benchmarks/pdf_identification.py.

The records are real: Crossref's for PNAS 10.1073/pnas.1414271111 and PLOS ONE
10.1371/journal.pone.0033693, arXiv's for 1706.03762. Crossref's title search answers
with the PNAS record (in Crossref's list envelope) when asked for its words, and with
nothing otherwise; DBLP and arXiv title searches find nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from doiget.papers import added as ac
from doiget.papers.adding import PdfAdder
from doiget.papers.service import Papers
from doiget.runtime import load_runtime
from doiget.verify.service import Verifier

from pdfmaker import write_paper_pdf
from replay import FIXTURES, ReplayUpstream, Reply

PNAS = "10.1073/pnas.1414271111"
PLOS = "10.1371/journal.pone.0033693"
ARXIV = "1706.03762"
PNAS_TITLE = (
    "Developing functional musculoskeletal tissues through hypoxia and lysyl "
    "oxidase-induced collagen cross-linking"
)
PNAS_AUTHORS = ["Eleftherios A. Makris", "Donald J. Responte", "Nikolaos K. Paschos", "Jerry C. Hu"]
PLOS_TITLE = (
    "Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia "
    "in the Basal Ganglia of Mice"
)
PLOS_AUTHORS = ["Shankar Sadasivan", "Brooks B. Pond", "Amar K. Pani", "Chunxu Qu"]
ATTENTION_TITLE = "Attention Is All You Need"
ATTENTION_AUTHORS = ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit"]
UNKNOWN_TITLE = "Notes on Folding Paper Cranes in Low Gravity"
UNKNOWN_AUTHORS = ["Ada Example", "Brook Sample"]
CITES_PNAS = (
    f"E. A. Makris et al. Developing functional musculoskeletal tissues. PNAS 2014. doi:{PNAS}"
)
JSON = {"Content-Type": "application/json"}


def route_sources(upstream: ReplayUpstream) -> None:
    """Every source a PDF's identification and resolution may ask."""
    for doi, name in ((PNAS, "works-10.1073_pnas.1414271111.json"),
                      (PLOS, "works-10.1371_journal.pone.0033693.json")):  # fmt: skip
        upstream.fixture("api.crossref.org", f"/works/{doi}", f"crossref/{name}")
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{PNAS}", "unpaywall/v2-10.1073_pnas.1414271111.json"
    )
    upstream.route("api.unpaywall.org", f"/v2/{PLOS}", Reply(404, b"{}", JSON))
    pnas = json.loads((FIXTURES / "crossref/works-10.1073_pnas.1414271111.json").read_text())
    route_title_search(upstream, pnas["message"], "musculoskeletal")

    def arxiv(query: dict[str, str]) -> Reply:
        name = "id_list-1706.03762-attention-2026.atom"
        if ARXIV not in query.get("id_list", ""):
            name = "id_list-0000.0000-empty.atom"
        body = (FIXTURES / "arxiv" / name).read_bytes()
        return Reply(200, body, {"Content-Type": "application/atom+xml"})

    upstream.responder("export.arxiv.org", "/api/query", arxiv)


def route_title_search(upstream: ReplayUpstream, work: dict[str, Any], word: str) -> None:
    """Crossref's title search answers with ``work`` (a record's message) when asked for
    ``word``, and with nothing otherwise; DBLP's finds nothing."""

    def search(query: dict[str, str]) -> Reply:
        asked = " ".join(query.values()).lower()
        items = [work] if word in asked else []
        body = {"status": "ok", "message-type": "work-list", "message": {"items": items}}
        return Reply(200, json.dumps(body).encode(), JSON)

    upstream.responder("api.crossref.org", "/works", search)
    empty_dblp = {"result": {"status": {"@code": "200"}, "hits": {"@total": "0", "@sent": "0"}}}
    upstream.json("dblp.org", "/search/publ/api", empty_dblp)


@dataclass(frozen=True)
class Case:
    """A PDF and the ref it must be identified as (None: it must stay unidentified)."""

    name: str
    path: Path
    expected: str | None


def built_cases(folder: Path) -> list[Case]:
    """PDFs built for every identification path, and for the ways it must fail."""
    folder.mkdir(parents=True, exist_ok=True)

    def made(name: str, title: str, authors: list[str], **how: object) -> Path:
        return write_paper_pdf(folder / f"{name}.pdf", title, authors, **how)  # type: ignore[arg-type]

    return [
        Case("xmp-doi", made("xmp-doi", PNAS_TITLE, PNAS_AUTHORS, xmp_doi=PNAS), PNAS),
        Case(
            "info-doi", made("info-doi", PLOS_TITLE, PLOS_AUTHORS, info_subject=f"doi:{PLOS}"), PLOS
        ),
        Case(
            "arxiv-stamp",
            made(
                "arxiv-stamp",
                ATTENTION_TITLE,
                ATTENTION_AUTHORS,
                arxiv_stamp=f"arXiv:{ARXIV}v5  [cs.CL]  6 Dec 2017",
            ),
            f"arxiv:{ARXIV}",
        ),
        Case("page-doi", made("page-doi", PLOS_TITLE, PLOS_AUTHORS, page_doi=PLOS), PLOS),
        Case("title-authors", made("title-authors", PNAS_TITLE, PNAS_AUTHORS), PNAS),
        Case(
            "cited-doi-only",
            made("cited-doi-only", UNKNOWN_TITLE, UNKNOWN_AUTHORS, cited=[CITES_PNAS]),
            None,
        ),
        Case("no-doi-unknown", made("no-doi-unknown", UNKNOWN_TITLE, UNKNOWN_AUTHORS), None),
        Case(
            "stamp-of-another-work",
            made(
                "stamp-of-another-work",
                UNKNOWN_TITLE,
                UNKNOWN_AUTHORS,
                arxiv_stamp=f"arXiv:{ARXIV}v1  [cs.CL]  12 Jun 2017",
            ),
            None,
        ),
        Case(
            "metadata-doi-of-another-work",
            made("metadata-doi-of-another-work", UNKNOWN_TITLE, UNKNOWN_AUTHORS, xmp_doi=PNAS),
            None,
        ),
    ]


def fixture_cases() -> list[Case]:
    """The project's fixture PDFs: none is a work the replay sources hold, so each must
    stay unidentified (OpenQuestion prints a placeholder DOI, 10.21105/jose.0XXXX)."""
    return [Case(path.stem, path, None) for path in sorted((FIXTURES / "pdf").glob("*.pdf"))]


def add_pdfs(
    env: dict[str, str],
    paths: Sequence[Path | str | bytes],
    allowed: Sequence[Path] | None = None,
) -> ac.PdfsAdded:
    """``paths`` added by one papers core and verifier, as ``doiget add`` adds them."""

    async def run() -> ac.PdfsAdded:
        runtime = load_runtime(env)
        papers = Papers(runtime)
        try:
            adder = PdfAdder(papers, Verifier.of(runtime))
            return await adder.add_many([os.fsdecode(path) for path in paths], allowed=allowed)
        finally:
            await papers.aclose()
            await runtime.aclose()

    return anyio.run(run)
