"""An offline replay of Crossref, DBLP and arXiv for HALLMARK, answering from real records.

What the replay holds, and nothing else:

1. the benchmark's pool of 950 real records (``real_records_pool.jsonl``), the works its
   perturbed entries were made from;
2. the real record of every ``VALID`` entry of the split whose work is not in the pool
   (real databases hold every real work): an entry DBLP-scraped by the benchmark is
   the DBLP record it was scraped from (journal articles of JMLR, TMLR, Machine
   Learning), served as DBLP and, with its DOI, as Crossref; an entry the benchmark's
   authors wrote with a language model and then confirmed is replaced by the published
   record of its work from ``data/hallmark_valid_records.jsonl`` (title, every author,
   year, venue and identifiers as arXiv, DBLP and the publisher print them, never the
   entry's own possibly garbled or truncated fields); a work cited with an arXiv DOI is
   answered by arXiv's record of that id, as the real arXiv API would.

A ``HALLUCINATED`` entry is never added: the real work it was made from is there only
when the pool (or a ``VALID`` entry of the split) holds it, and a fabrication matches
nothing. The replay reads no label other than "this entry is VALID" to pick the records
of item 2, and answers each query from the records alone, the way the real APIs answer
from their databases, in their response shapes: DBLP ``/search/publ/api`` (every query
word a prefix of a word of the record), Crossref ``/works/{doi}`` and
``/works?query.bibliographic=`` (records ranked by shared words), arXiv ``/api/query``
(``id_list``, ``ti:`` terms ANDed); PubMed's esearch finds nothing (no record is
biomedical). Records with a DBLP URL are DBLP's; arXiv records are arXiv's and DBLP's
(as CoRR); records with a publisher DOI are Crossref's.
"""

from __future__ import annotations

import collections
import html
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from replay import ReplayUpstream, Reply

VALID_RECORDS = Path(__file__).resolve().parent / "data" / "hallmark_valid_records.jsonl"
_ARXIV_ID = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?", re.IGNORECASE)
# DBLP's abbreviations of the journals the benchmark scraped, for the records' DBLP keys.
_DBLP_JOURNALS = {"Mach. Learn.": "ml", "J. Mach. Learn. Res.": "jmlr",
                  "Trans. Mach. Learn. Res.": "tmlr"}  # fmt: skip


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    return re.findall(r"[a-z0-9]+", folded)


@dataclass
class Record:
    """One real record of the pool."""

    title: str
    authors: list[str]
    year: str
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    dblp_key: str | None

    @property
    def journal(self) -> bool:
        """Whether DBLP files the record as a journal article."""
        return bool(self.dblp_key and self.dblp_key.startswith("journals/"))

    @property
    def words(self) -> list[str]:
        return _words(" ".join([self.title, *self.authors, self.venue or "", self.year]))


def title_key(title: str) -> str:
    """A title's words, for telling whether two records are one work (BibTeX's
    case-protecting braces aside: '{GAN}s' is 'GANs')."""
    return " ".join(_words(title.replace("{", "").replace("}", "")))


def _record(fields: dict[str, Any]) -> Record:
    """A record from pool-style fields (title, author, year, venue, doi, url)."""
    url = fields.get("url") or ""
    doi = (fields.get("doi") or "").lower() or None
    arxiv = _ARXIV_ID.search(url) if "arxiv.org" in url else None
    if doi and doi.startswith("10.48550/"):
        found = _ARXIV_ID.search(doi)
        arxiv = arxiv or found
        doi = None
    return Record(
        title=fields["title"],
        authors=[a.strip() for a in fields["author"].split(" and ") if a.strip()],
        year=str(fields.get("year") or ""),
        venue=fields.get("booktitle") or fields.get("journal"),
        doi=doi,
        arxiv_id=arxiv.group(1) if arxiv else None,
        dblp_key=url.split("/rec/", 1)[1] if "dblp.org/rec/" in url else None,
    )


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_pool(path: Path) -> list[Record]:
    """The pool's records."""
    return [_record(item["fields"]) for item in _read(path)]


def replay_records(
    entries: list[dict[str, Any]], pool: list[Record], written: Path = VALID_RECORDS
) -> list[Record]:
    """The pool plus the real record of each VALID entry whose work the pool lacks
    (module docstring); never a HALLUCINATED entry."""
    known = {title_key(record.title) for record in pool}
    published: dict[str, list[Record]] = collections.defaultdict(list)
    for item in _read(written):
        record = _record(item["fields"])
        published[title_key(record.title)].append(record)
    added: list[Record] = []
    for entry in entries:
        if entry["label"] != "VALID":
            continue
        title = title_key(entry["fields"]["title"])
        if title in known:
            continue
        if entry.get("generation_method") == "scraped":
            fields = dict(entry["fields"])
            venue = fields.get("booktitle") or fields.get("journal") or ""
            journal = _DBLP_JOURNALS.get(venue, "misc")
            fields["url"] = f"https://dblp.org/rec/journals/{journal}/{entry['bibtex_key']}"
            added.append(_record(fields))
        else:
            found = published.get(title) or _near(title, published)
            if not found:
                raise SystemExit(f"no published record for the VALID entry {entry['bibtex_key']}")
            added.extend(found)
        known.add(title)
        known.update(title_key(record.title) for record in added)
    return [*pool, *added]


def _near(title: str, published: dict[str, list[Record]]) -> list[Record]:
    """The written records of a title cited with a word lost to LaTeX ('{AlphaFold')."""
    for key, records in published.items():
        if key.startswith(title) or title.startswith(key):
            return records
    return []


def _person(name: str) -> str:
    """A name as Crossref and arXiv print it: no DBLP disambiguation number, no entity."""
    return re.sub(r"\s+\d{4}$", "", html.unescape(name))


def _split_name(name: str) -> tuple[str, str]:
    parts = _person(name).split()
    return " ".join(parts[:-1]), parts[-1] if parts else name


def _no_pubmed(query: dict[str, str]) -> Reply:
    """PubMed's answer to every search: the records are computing papers, none biomedical."""
    body = b"<eSearchResult><Count>0</Count><RetMax>0</RetMax><IdList/></eSearchResult>"
    return Reply(200, body, {"Content-Type": "text/xml"})


# -- the replay: each upstream answers from the pool, in its own response shape ---------


class PoolReplay:
    """Answers DBLP, Crossref and arXiv queries from the pool."""

    def __init__(self, records: list[Record]) -> None:
        self.pool = records
        self.dblp = [r for r in records if r.dblp_key or r.arxiv_id]
        self.crossref = {r.doi: r for r in records if r.doi}
        self.arxiv = {r.arxiv_id: r for r in records if r.arxiv_id}
        self._dblp_words = [set(r.words) for r in self.dblp]

    def route(self, upstream: ReplayUpstream) -> None:
        upstream.responder("dblp.org", "/search/publ/api", self.dblp_search)
        upstream.responder("api.crossref.org", "/works", self.crossref_search)
        for doi in self.crossref:
            record = self.crossref[doi]
            upstream.responder(
                "api.crossref.org", f"/works/{doi}", lambda q, r=record: self._crossref_work(r)
            )
        upstream.responder("export.arxiv.org", "/api/query", self.arxiv_query)
        upstream.responder("eutils.ncbi.nlm.nih.gov", "/entrez/eutils/esearch.fcgi", _no_pubmed)

    # DBLP ------------------------------------------------------------------------------

    def _dblp_hit(self, record: Record, score: int) -> dict[str, Any]:
        info: dict[str, Any] = {
            "authors": {"author": [{"@pid": "0/0", "text": a} for a in record.authors]},
            "title": record.title.rstrip(".") + ".",
            "year": record.year,
        }
        if record.dblp_key:
            kind = "Journal Articles" if record.journal else "Conference and Workshop Papers"
            info |= {"venue": record.venue, "type": kind}
            info |= {"key": record.dblp_key, "url": f"https://dblp.org/rec/{record.dblp_key}"}
            if record.doi:
                info["doi"] = record.doi.upper()
                info["ee"] = f"https://doi.org/{record.doi}"
        else:
            key = f"journals/corr/abs-{record.arxiv_id.replace('.', '-')}"
            info |= {"venue": "CoRR", "volume": f"abs/{record.arxiv_id}"}
            info |= {"type": "Informal and Other Publications", "key": key}
            info |= {"ee": f"https://arxiv.org/abs/{record.arxiv_id}"}
            info["url"] = f"https://dblp.org/rec/{key}"
        if len(record.authors) == 1:
            info["authors"]["author"] = info["authors"]["author"][0]
        return {"@score": str(score), "@id": "1", "info": info, "url": "URL#1"}

    def dblp_search(self, query: dict[str, str]) -> Reply:
        terms = _words(query.get("q", ""))
        size = int(query.get("h", "30"))
        hits = []
        for record, vocabulary in zip(self.dblp, self._dblp_words, strict=True):
            if terms and all(any(w.startswith(t) for w in vocabulary) for t in terms):
                hits.append(record)
        sent = hits[:size]
        hit_key: dict[str, Any] = {"@total": str(len(hits)), "@computed": str(len(hits)),
                                   "@sent": str(len(sent)), "@first": "0"}  # fmt: skip
        if sent:
            hit_key["hit"] = [self._dblp_hit(r, len(terms)) for r in sent]
        body = {"result": {"query": " ".join(f"{t}*" for t in terms),
                           "status": {"@code": "200", "text": "OK"}, "hits": hit_key}}  # fmt: skip
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    # Crossref --------------------------------------------------------------------------

    def _crossref_message(self, record: Record) -> dict[str, Any]:
        authors = []
        for name in record.authors:
            given, family = _split_name(name)
            authors.append({"given": given, "family": family, "sequence": "additional"})
        return {
            "DOI": record.doi,
            "title": [record.title.rstrip(".")],
            "author": authors,
            "container-title": [record.venue] if record.venue else [],
            "issued": {"date-parts": [[int(record.year)]]} if record.year.isdigit() else {},
            "type": "journal-article" if record.journal else "proceedings-article",
            "URL": f"https://doi.org/{record.doi}",
        }

    def _crossref_work(self, record: Record) -> Reply:
        body = {"status": "ok", "message-type": "work", "message": self._crossref_message(record)}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def crossref_search(self, query: dict[str, str]) -> Reply:
        wanted = collections.Counter(_words(query.get("query.bibliographic", "")))
        author = set(_words(query.get("query.author", "")))
        rows = int(query.get("rows", "20"))
        scored = []
        for record in self.crossref.values():
            title = set(_words(record.title))
            names = set(_words(" ".join(record.authors)))
            score = sum(1 for word in wanted if word in title) + 2 * len(author & names)
            if score:
                scored.append((score, record))
        scored.sort(key=lambda item: -item[0])
        items = [self._crossref_message(r) | {"score": s} for s, r in scored[:rows]]
        message = {"total-results": len(scored), "items": items, "items-per-page": rows}
        body = {"status": "ok", "message-type": "work-list", "message": message}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    # arXiv -----------------------------------------------------------------------------

    def _entry(self, record: Record) -> str:
        authors = "".join(
            f"<author><name>{escape(_person(a))}</name></author>" for a in record.authors
        )
        return (
            f"<entry><id>http://arxiv.org/abs/{record.arxiv_id}v1</id>"
            f"<published>{record.year}-02-12T00:00:00Z</published>"
            f"<updated>{record.year}-02-12T00:00:00Z</updated>"
            f"<title>{escape(record.title)}</title><summary>.</summary>{authors}"
            f'<link href="https://arxiv.org/pdf/{record.arxiv_id}v1" title="pdf" '
            'type="application/pdf"/></entry>'
        )

    def arxiv_query(self, query: dict[str, str]) -> Reply:
        found: list[Record] = []
        if query.get("id_list"):
            wanted = _ARXIV_ID.search(query["id_list"])
            record = self.arxiv.get(wanted.group(1)) if wanted else None
            found = [record] if record else []
        else:
            terms = re.findall(r"ti:\"?([^\s\")]+)", query.get("search_query", ""))
            terms = [w for t in terms for w in _words(t)]
            for record in self.arxiv.values():
                title = set(_words(record.title))
                if terms and all(t in title for t in terms):
                    found.append(record)
        size = int(query.get("max_results", "10"))
        entries = "".join(self._entry(r) for r in found[:size])
        feed = (
            "<?xml version='1.0' encoding='UTF-8'?>"
            '<feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
            'xmlns:arxiv="http://arxiv.org/schemas/atom">'
            f"<id>https://arxiv.org/api/x</id><title>arXiv Query</title>"
            f"<opensearch:totalResults>{len(found)}</opensearch:totalResults>{entries}</feed>"
        )
        return Reply(200, feed.encode(), {"Content-Type": "application/atom+xml"})
