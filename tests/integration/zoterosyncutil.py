"""A Zotero library for the sync tests, and the upstream answers that check its works.

The library lives in the fake Zotero (``tests/zoterofake.py``), which answers in
Zotero's documented shapes and logs every request it receives. :class:`FakeApi` asks
it exactly as :class:`doiget.zotero.api.ZoteroApi` asks Zotero: one request per
call, as the local app (``/api/users/0/...``, files by path) or as the Web API (the
library's prefix and its key, files downloaded through the file host's redirect).

The works: Makris et al. 2014 (PNAS; Crossref and Unpaywall records), Wakefield et al.
1998 (retracted; Crossref's record with its retraction notice), Vaswani et al. 2017
(arXiv 1706.03762, arXiv's Atom record), and two works no source knows, one with a PDF
and one without. Everything the verifier asks is answered by the replay upstream from
recorded shapes; nothing leaves the machine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from importutil import route_library
from integrityutil import WAKEFIELD, record

from doiget.errors import DoigetError, ErrorCode
from doiget.zotero.api import ZoteroApi
from doiget.zotero.models import AttachmentFile, Collection, Deleted, LibraryRef, ZoteroItem
from zoterofake import (
    API_HOST,
    FILES_HOST,
    GROUP_KEY,
    WRITE_KEY,
    FakeAnswer,
    FakeRequest,
    FakeZotero,
)

from pdfmaker import write_paper_pdf
from replay import FIXTURES, ReplayUpstream, Reply

PNAS = "10.1073/pnas.1414271111"
ATTENTION = "arxiv:1706.03762"
SENTENCE = "Hypoxic culture raised the collagen cross-link density of the engineered tissue"
_PNAS_RECORD = (FIXTURES / "crossref" / "works-10.1073_pnas.1414271111.json").read_text()
UNKNOWN_TITLE = "Études sur la dérive des glaciers — ледники и потоки"


class FakeApi(ZoteroApi):
    """Zotero's read protocol against the fake library: one request a call."""

    def __init__(self, fake: FakeZotero, *, local: bool) -> None:
        self.fake = fake
        self.local = local
        kind = "groups" if fake.group else "users"
        self.library = (
            LibraryRef("users", "0", local=True) if local else LibraryRef(kind, fake.library_id)
        )
        self.down_after: int | None = None  # requests answered before Zotero goes away

    def _get(self, path: str, **query: str) -> FakeAnswer:
        if self.down_after is not None:
            if self.down_after <= 0:
                raise DoigetError(ErrorCode.NETWORK_ERROR, "Zotero did not answer; try later.")
            self.down_after -= 1
        if self.local:
            request = FakeRequest("127.0.0.1", "GET", f"/api/users/0{path}", tuple(query.items()))
        else:
            key = GROUP_KEY if self.fake.group else WRITE_KEY
            headers = {"zotero-api-key": key, "zotero-api-version": "3"}
            prefix = f"/{self.library.prefix}"
            request = FakeRequest(API_HOST, "GET", prefix + path, tuple(query.items()), headers)
        answer = self.fake.handle(request)
        if answer.status >= 400 and answer.status != 404:
            raise DoigetError(ErrorCode.NETWORK_ERROR, f"Zotero answered {answer.status}")
        return answer

    @staticmethod
    def _version(answer: FakeAnswer) -> int:
        return int(answer.headers["Last-Modified-Version"])

    @staticmethod
    def _item(obj: Mapping[str, Any]) -> ZoteroItem:
        meta = obj.get("meta") or {}
        return ZoteroItem(
            obj["key"], obj["version"], obj["data"], obj.get("csljson"), meta.get("numChildren")
        )

    async def library_version(self) -> int:
        return self._version(self._get("/items", limit="1", format="versions"))

    async def item_versions(self, *, since: int | None = None) -> tuple[dict[str, int], int]:
        """Every page of the listing (the Web API pages even ``format=versions``)."""
        query = {"format": "versions", **({"since": str(since)} if since is not None else {})}
        versions: dict[str, int] = {}
        while True:
            answer = self._get("/items", **query, start=str(len(versions)), limit="100")
            page = json.loads(answer.body)
            versions.update(page)
            if not page or len(versions) >= int(answer.headers["Total-Results"]):
                return versions, self._version(answer)

    async def items_by_key(self, keys: Sequence[str]) -> list[ZoteroItem]:
        assert len(keys) <= 50
        answer = self._get("/items", itemKey=",".join(keys), include="data,csljson", limit="50")
        return [self._item(obj) for obj in json.loads(answer.body)]

    async def children(self, key: str) -> list[ZoteroItem]:
        return [self._item(obj) for obj in json.loads(self._get(f"/items/{key}/children").body)]

    async def collections(self) -> list[Collection]:
        listed = [c["data"] for c in json.loads(self._get("/collections").body)]
        return [
            Collection(c["key"], c["version"], c["name"], c["parentCollection"] or None)
            for c in listed
        ]

    async def deleted(self, since: int) -> Deleted | None:
        if self.local:
            return None
        answer = self._get("/deleted", since=str(since))
        body = json.loads(answer.body)
        return Deleted(tuple(body["items"]), tuple(body["collections"]), self._version(answer))

    async def attachment_file(self, attachment: ZoteroItem, into: Path) -> AttachmentFile:
        name = str(attachment.data.get("filename") or "file.pdf")
        kind = str(attachment.data.get("contentType") or "")
        if self.local:
            url = self._get(f"/items/{attachment.key}/file/view/url").body.decode()
            path = Path(unquote(urlsplit(url).path))
            if not path.is_file():
                return AttachmentFile(attachment.key, kind, name, missing=f"no file at {path}")
            return AttachmentFile(attachment.key, kind, name, path=str(path))
        answer = self._get(f"/items/{attachment.key}/file")
        if answer.status == 404:
            return AttachmentFile(attachment.key, kind, name, missing="Zotero holds no file")
        location = urlsplit(answer.headers["Location"])
        query = tuple(parse_qsl(location.query))
        got = self.fake.handle(FakeRequest(FILES_HOST, "GET", location.path, query))
        target = into / name
        target.write_bytes(got.body)
        return AttachmentFile(attachment.key, kind, name, path=str(target))


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
