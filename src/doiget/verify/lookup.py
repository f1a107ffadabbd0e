"""The upstream questions verification asks, each answered at most once.

Answers (a record, a list of hits, or "no such record") are kept on disk under the
data directory, keyed by the source, the URL and every parameter sent, so checking
a bibliography again costs no upstream budget. Failures are never kept. Requests go
through the process's :class:`~doiget.net.network.Network`: the papers rate budget,
each upstream's own ceiling, retries and the host map all apply.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from doiget.atomicfile import write_atomic
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.net.network import Network
from doiget.sources import arxiv, crossref, dblp, openalex, pubmed, semantic_scholar
from doiget.sources.shape import ShapeError
from doiget.verify.text import words

CACHE_VERSION: Final = 1
CACHE_SECONDS: Final = 7 * 24 * 3600
DBLP_HITS: Final = 10
CROSSREF_ROWS: Final = 5
ARXIV_RESULTS: Final = 5
INDEX_RESULTS: Final = 5
PUBMED_RESULTS: Final = 3
# arXiv's search treats these as syntax; they never help find a title.
_ARXIV_SYNTAX: Final = re.compile(r"\b(?:and|or|andnot)\b", re.IGNORECASE)

T = TypeVar("T")


class Offload(Protocol):
    """Where the work of a check that is not waiting on an upstream runs (reading kept
    answers, parsing records of thousands of authors, matching): ``work()``'s result,
    computed in a lane of the server's work pool, or right here (the command line has
    no other caller to keep answering)."""

    def __call__(self, work: Callable[[], T], /) -> Awaitable[T]: ...


async def here(work: Callable[[], T]) -> T:
    """``work()`` on the caller's own thread."""
    return work()


class AnswerStore:
    """Upstream answers on disk, one small JSON file per question."""

    def __init__(self, directory: Path | None, ttl: float = CACHE_SECONDS) -> None:
        self._directory = directory
        self._ttl = ttl

    def _path(self, question: tuple[str, ...]) -> Path | None:
        if self._directory is None:
            return None
        digest = hashlib.sha256(json.dumps([CACHE_VERSION, *question]).encode()).hexdigest()
        return self._directory / digest[:2] / f"{digest}.json"

    def get(self, question: tuple[str, ...]) -> tuple[bool, Any]:
        """(True, answer) when a fresh answer is kept, else (False, None)."""
        path = self._path(question)
        if path is None or not path.exists():
            return False, None
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False, None
        if not isinstance(kept, dict) or time.time() - float(kept.get("at", 0)) > self._ttl:
            return False, None
        return True, kept.get("answer")

    def put(self, question: tuple[str, ...], answer: Any) -> None:
        """Keep ``answer``; a cache that cannot be written only costs a later request."""
        path = self._path(question)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps({"at": time.time(), "answer": answer}).encode())
        except OSError:
            return


@dataclass
class Lookups:
    """The questions one reference's check asks; ``requests`` counts those that reached
    an upstream, ``failures`` the sources that failed (source -> message)."""

    network: Network
    store: AnswerStore
    mailto: str | None = None
    pubmed_identity: pubmed.EutilsIdentity | None = None
    s2_key: str | None = field(default=None, repr=False)
    offload: Offload = field(default=here, repr=False)
    requests: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    async def _answer(
        self,
        source: str,
        question: tuple[str, ...],
        ask: Callable[[], Awaitable[Any]],
        parse: Callable[[Any], Any] = lambda raw: raw,
    ) -> tuple[bool, Any]:
        """(True, ``parse(raw answer)``) or (False, None) when the source failed or
        answered in a shape it does not have (recorded). Only an answer that parses
        is kept, so a malformed one is asked again next time."""
        key = (source, *question)
        known, answer = await self.offload(lambda: self.store.get(key))
        if not known:
            self.requests += 1
            try:
                answer = await ask()
            except DoigetError as error:
                if error.code is not ErrorCode.NOT_FOUND:
                    self.failures[source] = f"{error.code.value}: {error.message}"
                    return False, None
                answer = None
        try:
            parsed = None if answer is None else await self.offload(lambda: parse(answer))
        except ShapeError as error:
            self.failures[source] = f"NETWORK_ERROR: {source} answered {error}"
            return False, None
        if not known:
            await self.offload(lambda: self.store.put(key, answer))
        return True, parsed

    async def crossref_doi(self, doi: str) -> tuple[bool, Work | None]:
        """Crossref's record of ``doi`` (None when Crossref has none)."""
        client = self.network.client("crossref")
        url = crossref.API_BASE + crossref.doi_path(doi)
        params = {"mailto": self.mailto} if self.mailto else None
        return await self._answer(
            "crossref",
            ("doi", doi),
            lambda: client.get_json(url, params=params),
            crossref.parse_work,
        )

    async def crossref_search(self, bibliographic: str, author: str | None) -> list[Work]:
        """Crossref's best records for a title (or whole reference) and an author name."""
        client = self.network.client("crossref")
        params: dict[str, str | int] = {"query.bibliographic": bibliographic, "rows": CROSSREF_ROWS}
        if author:
            params["query.author"] = author
        if self.mailto:
            params["mailto"] = self.mailto
        url = crossref.API_BASE.rstrip("/")
        question = ("search", bibliographic, author or "", str(CROSSREF_ROWS))
        ok, works = await self._answer(
            "crossref",
            question,
            lambda: client.get_json(url, params=params),
            lambda data: crossref.parse_works_page(data).works,
        )
        return works if ok and works else []

    async def dblp_search(self, query: str) -> list[Work]:
        """DBLP's publications matching every word of ``query``."""
        client = self.network.client("dblp")
        params: dict[str, str | int] = {"q": query, "format": "json", "h": DBLP_HITS}
        ok, hits = await self._answer(
            "dblp",
            ("search", query, str(DBLP_HITS)),
            lambda: client.get_json(dblp.API_URL, params=params),
            dblp.parse_hits,
        )
        return hits if ok and hits else []

    async def _arxiv_feed(
        self, question: tuple[str, ...], params: dict[str, str | int]
    ) -> tuple[bool, list[Work]]:
        """(answered, works); an id or query arXiv refuses is an answer with no works."""
        client = self.network.client("arxiv")

        async def ask() -> str:
            fetched = await client.get(arxiv.API_URL, params=params, accept_status=(400,))
            return fetched.content.decode("utf-8", errors="replace")

        ok, body = await self._answer("arxiv", question, ask)
        if not ok or not body:
            return ok, []
        try:
            return True, arxiv.parse_feed(body.encode("utf-8"))
        except DoigetError:
            return True, []
        except ShapeError as error:
            self.failures["arxiv"] = f"NETWORK_ERROR: arXiv {error}"
            return False, []

    async def arxiv_id(self, arxiv_id: str) -> tuple[bool, Work | None]:
        """arXiv's record of an id (None when arXiv has none)."""
        params: dict[str, str | int] = {"id_list": arxiv_id, "max_results": 1}
        ok, works = await self._arxiv_feed(("id", arxiv_id), params)
        return ok, works[0] if works else None

    async def arxiv_title(self, title: str) -> list[Work]:
        """arXiv's records whose title has every word of ``title``."""
        terms = [word for word in words(_ARXIV_SYNTAX.sub(" ", title)) if len(word) > 1]
        if not terms:
            return []
        query = " AND ".join(f"ti:{term}" for term in terms)
        params: dict[str, str | int] = {
            "search_query": query,
            "start": 0,
            "max_results": ARXIV_RESULTS,
        }
        return (await self._arxiv_feed(("title", query, str(ARXIV_RESULTS)), params))[1]

    async def _text(self, source: str, question: tuple[str, ...], url: str,
                    params: dict[str, str | int]) -> tuple[bool, str | None]:  # fmt: skip
        """A text answer (XML), kept as text."""
        client = self.network.client(source)

        async def ask() -> str:
            fetched = await client.get(url, params=params)
            return fetched.content.decode("utf-8", errors="replace")

        ok, body = await self._answer(source, question, ask)
        return ok, body or None

    def _identity(self) -> dict[str, str | int]:
        identity = self.pubmed_identity or pubmed.EutilsIdentity(email=self.mailto)
        return dict(identity.params())

    async def pubmed_records(self, pmids: list[str]) -> list[Work]:
        """PubMed's records of ``pmids`` (ids PubMed does not know are absent)."""
        if not pmids:
            return []
        params: dict[str, str | int] = {"db": "pubmed", "id": ",".join(pmids), "retmode": "xml"}
        ok, body = await self._text(
            "pubmed", ("efetch", *pmids), pubmed.EUTILS + "efetch.fcgi", params | self._identity()
        )
        if not ok or body is None:
            return []
        try:
            return [article.to_work() for article in pubmed.parse_article_set(body.encode())]
        except ShapeError as error:
            self.failures["pubmed"] = f"NETWORK_ERROR: PubMed {error}"
            return []

    async def pubmed_title(self, title: str) -> list[Work]:
        """PubMed's records whose title has the title's words (esearch, then efetch)."""
        terms = " AND ".join(f"{word}[ti]" for word in words(title) if len(word) > 2)
        if not terms:
            return []
        params: dict[str, str | int] = {"db": "pubmed", "term": terms, "retmax": PUBMED_RESULTS}
        ok, body = await self._text(
            "pubmed", ("esearch", terms, str(PUBMED_RESULTS)), pubmed.EUTILS + "esearch.fcgi",
            params | self._identity(),
        )  # fmt: skip
        if not ok or body is None:
            return []
        try:
            ids = pubmed.parse_search(body.encode()).ids
        except (ShapeError, DoigetError) as error:
            self.failures["pubmed"] = f"NETWORK_ERROR: PubMed {error}"
            return []
        return await self.pubmed_records(ids)

    async def index_search(self, index: str, title: str) -> list[Work]:
        """OpenAlex's or Semantic Scholar's best records for a title (opt-in sources)."""
        client = self.network.client(index)
        if index == "openalex":
            search = openalex.WorksSearch(query=title, per_page=INDEX_RESULTS)
            url, params = openalex.API_BASE, search.params(self.mailto)
            headers: dict[str, str] = {}
        else:
            url = semantic_scholar.API_ROOT + "paper/search"
            params = {"query": title, "offset": 0, "limit": INDEX_RESULTS,
                      "fields": semantic_scholar.FIELDS}  # fmt: skip
            headers = {"x-api-key": self.s2_key} if self.s2_key else {}
        ok, data = await self._answer(
            index, ("search", title, str(INDEX_RESULTS)),
            lambda: client.get_json(url, params=params, headers=headers),
        )  # fmt: skip
        if not ok or not data:
            return []
        try:
            if index == "openalex":
                return [found.work for found in openalex.parse_found_page(data).found]
            return [paper.to_work() for paper in semantic_scholar.parse_search_page(data)]
        except ShapeError as error:
            self.failures[index] = f"NETWORK_ERROR: {index} {error}"
            return []
