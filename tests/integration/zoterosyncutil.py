"""A Zotero library for the sync tests, and the upstream answers that check its works.

The library lives in the fake Zotero (``tests/zoterofake.py``), which answers in
Zotero's documented shapes and logs every request it receives, served as the desktop
app on a loopback port or as api.zotero.org on the replay upstream; doiget reaches it
through its own Zotero connection and network, as it reaches Zotero.

The works: Makris et al. 2014 (PNAS; Crossref and Unpaywall records), Wakefield et al.
1998 (retracted; Crossref's record with its retraction notice), Vaswani et al. 2017
(arXiv 1706.03762, arXiv's Atom record), and two works no source knows, one with a PDF
and one without. Everything the verifier asks is answered by the replay upstream from
recorded shapes; nothing leaves the machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from importutil import route_library
from integrityutil import WAKEFIELD, record

from zoterofake import (
    FILES_HOST,
    GROUP_ID,
    GROUP_KEY,
    USER_ID,
    WRITE_KEY,
    FakeAnswer,
    FakeRequest,
    FakeZotero,
    LocalZoteroServer,
    mount_web,
    web_env,
)

from pdfmaker import write_paper_pdf
from replay import FIXTURES, ReplayUpstream, Reply

PNAS = "10.1073/pnas.1414271111"
ATTENTION = "arxiv:1706.03762"
SENTENCE = "Hypoxic culture raised the collagen cross-link density of the engineered tissue"
_PNAS_RECORD = (FIXTURES / "crossref" / "works-10.1073_pnas.1414271111.json").read_text()
UNKNOWN_TITLE = "Études sur la dérive des glaciers — ледники и потоки"


@dataclass
class Served:
    """The fake library served as the desktop app or the Web API, the settings that
    point doiget at it, and a switch that takes it away mid-sync."""

    fake: FakeZotero
    env: dict[str, str]
    local: LocalZoteroServer | None = None
    # Zotero's requests answered before it stops answering (503); None: always.
    answers_left: int | None = None

    def stop(self) -> None:
        if self.local is not None:
            self.local.stop()

    def zotero_requests(self) -> int:
        """The requests Zotero received (a Web API download's file host excepted)."""
        return sum(1 for request in self.fake.requests if request.host != FILES_HOST)


class _Failing(FakeZotero):
    """The fake, answering 503 once ``served.answers_left`` requests were answered."""

    served: Served

    def handle(self, request: FakeRequest) -> FakeAnswer:
        left = self.served.answers_left
        if left is not None:
            if left <= 0:
                return FakeAnswer.text(503, "Service Unavailable")
            self.served.answers_left = left - 1
        return super().handle(request)


def serve(mode: str, files_dir: Path, upstream: ReplayUpstream) -> Served:
    """An empty fake library served as ``local`` (the desktop app on a loopback port),
    ``web`` (a user library on api.zotero.org) or ``group`` (a group library)."""
    fake = _Failing(group=mode == "group", files_dir=files_dir)
    if mode == "local":
        server = LocalZoteroServer(fake).start()
        served = Served(fake, {"DOIGET_ZOTERO_LOCAL": server.url}, server)
    else:
        mount_web(upstream, fake)
        library = f"groups/{GROUP_ID}" if mode == "group" else f"users/{USER_ID}"
        key = GROUP_KEY if mode == "group" else WRITE_KEY
        served = Served(fake, web_env(library=library, key=key, write="off"))
    fake.served = served
    return served


@dataclass
class Library:
    """The keys of the test library's items."""

    pnas: str
    pnas_pdf: str
    wakefield: str
    attention: str
    unknown_with_pdf: str
    unknown: str
    missing_file: str
    reading: str
    nested: str


def _article(
    fake: FakeZotero, title: str, doi: str | None, author: tuple[str, str], date: str, **more: Any
) -> str:
    data: dict[str, Any] = {
        "itemType": "journalArticle",
        "title": title,
        "creators": [{"creatorType": "author", "firstName": author[0], "lastName": author[1]}],
        "date": date,
        **more,
    }
    if doi:
        data["DOI"] = doi
    return fake.add_item(data)


def build_library(fake: FakeZotero, folder: Path) -> Library:
    """The test library in ``fake``: the works above, tags, citation keys both ways,
    nested collections and a PDF attachment whose file is missing."""
    folder.mkdir(parents=True, exist_ok=True)
    reading = fake.add_collection("Reading")
    nested = fake.add_collection("Méthodes", parent=reading)
    pnas = _article(
        fake,
        "Developing functional musculoskeletal tissues through hypoxia and lysyl "
        "oxidase-induced collagen cross-linking",
        PNAS,
        ("Eleftherios A.", "Makris"),
        "2014-10-27",
        extra="PMID: 25331879\nCitation Key: makris2014hypoxia",
        tags=[{"tag": "cartilage"}, {"tag": "à lire", "type": 1}],
        collections=[nested],
    )
    paper = write_paper_pdf(
        folder / "makris.pdf",
        "Developing functional musculoskeletal tissues",
        ["Eleftherios A. Makris"],
        sections=[("Results", SENTENCE + ". " + "The effect held across donors. " * 6)],
    )
    pnas_pdf = fake.add_pdf(pnas, paper.read_bytes(), filename="Makris 2014, hypoxia.pdf")
    wakefield = _article(
        fake,
        "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive "
        "developmental disorder in children",
        WAKEFIELD,
        ("Andrew J.", "Wakefield"),
        "1998",
        collections=[reading],
    )
    attention = fake.add_item(
        {
            "itemType": "preprint",
            "title": "Attention Is All You Need",
            "creators": [{"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"}],
            "repository": "arXiv",
            "archiveID": "arXiv:1706.03762",
            "url": "http://arxiv.org/abs/1706.03762",
            "date": "2017-06-12",
            "citationKey": "vaswani2017attention",
            "tags": [{"tag": "transformers"}],
        }
    )
    unknown_with_pdf = _article(fake, UNKNOWN_TITLE, None, ("Søren", "Ødegård"), "2021")
    odd = write_paper_pdf(folder / "odd.pdf", "A glacier report nobody indexed", ["Ines Orlova"])
    fake.add_pdf(unknown_with_pdf, odd.read_bytes(), filename="Études.pdf")
    unknown = _article(
        fake, "Quantum Gravity Priors for Sparse Transformers", None, ("Pavel", "Gui"), "2021"
    )
    missing_file = fake.add_pdf(attention, None, filename="missing.pdf")
    fake.add_note(pnas, "<p>Read p. 3 again.</p>")
    return Library(
        pnas, pnas_pdf, wakefield, attention, unknown_with_pdf, unknown, missing_file, reading,
        nested,
    )  # fmt: skip


GENERATED = "10.5555/gen."


def _generated_record(doi: str) -> Reply:
    """Crossref's record of PNAS re-addressed to a generated work of the fake's
    ``bulk`` (its DOI, title, author and year), so each is a real-looking record."""
    number = int(doi.rsplit(".", 1)[1])
    record = json.loads(_PNAS_RECORD)
    message = record["message"]
    message.update(
        DOI=doi,
        title=[f"Generated article {number:05d} on measurement"],
        author=[{"given": "Ada", "family": f"Author{number}", "sequence": "first"}],
        issued={"date-parts": [[1990 + number % 35]]},
        published={"date-parts": [[1990 + number % 35]]},
        **{"container-title": ["Journal of Generated Results"], "updated-by": []},
    )
    for name in ("published-print", "published-online", "relation", "reference"):
        message.pop(name, None)
    return Reply(200, json.dumps(record).encode(), {"Content-Type": "application/json"})


def route_generated(upstream: ReplayUpstream) -> None:
    """Crossref's answers for the works of the fake's ``bulk``; Unpaywall knows none."""

    def crossref(recorded: Any) -> Reply:
        doi = unquote(recorded.path.removeprefix("/works/")).lower()
        if doi.startswith(GENERATED):
            return _generated_record(doi)
        return Reply(404, b"Resource not found.", {})

    upstream.mount("api.crossref.org", crossref)
    upstream.mount("api.unpaywall.org", lambda recorded: Reply(404, b'{"error": true}', {}))


def route_works(upstream: ReplayUpstream) -> None:
    """The recorded answers for the library's works (and empty ones for the others)."""
    route_library(upstream)
    upstream.json("api.crossref.org", f"/works/{WAKEFIELD}", record(WAKEFIELD))
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{WAKEFIELD}", "unpaywall/v2-10.1038_nature12373.json"
    )
