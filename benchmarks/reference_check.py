"""Reference verification on HALLMARK: detection, false positives, calibration, cost.

Builds an offline replay of Crossref, DBLP and arXiv from the benchmark's pool of real
records (the records the perturbed entries were made from) and serves it through the
test suite's replay TLS server and the DOIGET_HOST_MAP seam, so doiget's real code,
rate gate and cache run unchanged. The replay knows nothing of the labels: it answers
each query from the pool alone, the way the real APIs answer from their databases, in
their response shapes: DBLP ``/search/publ/api`` (every query word a prefix of a word
of the record), Crossref ``/works/{doi}`` and ``/works?query.bibliographic=`` (records
ranked by shared words), arXiv ``/api/query`` (``id_list``, ``ti:`` terms ANDed).
Records with a DBLP URL are DBLP's; arXiv records are arXiv's and DBLP's (as CoRR);
records with a publisher DOI are Crossref's.

    python benchmarks/reference_check.py                       # the shared dev split
    python benchmarks/reference_check.py path/to/split.jsonl --pool path/to/pool.jsonl
    python benchmarks/reference_check.py --limit 200 --cache /tmp/refcache

An entry is flagged when its verdict is ``miscited`` or ``not_found``; ``uncertain``
counts as not flagged. Confidence is scored against correctness (verified on a valid
entry, flagged on a hallucinated one) for the expected calibration error (10 bins).
"""

from __future__ import annotations

import argparse
import collections
import html
import json
import re
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from doiget.net.network import Network  # noqa: E402
from doiget.runtime import load_runtime  # noqa: E402
from doiget.verify.lookup import AnswerStore  # noqa: E402
from doiget.verify.readers import read_bibtex  # noqa: E402
from doiget.verify.service import Verifier  # noqa: E402

from replay import ReplayUpstream, Reply  # noqa: E402

DEFAULT_DIR = ROOT.parent.parent / "shared" / "fixtures" / "benchmark" / "hallmark"
if not DEFAULT_DIR.exists():
    DEFAULT_DIR = Path("/work/shared/fixtures/benchmark/hallmark")
_ARXIV_ID = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?", re.IGNORECASE)


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
    def words(self) -> list[str]:
        return _words(" ".join([self.title, *self.authors, self.venue or "", self.year]))


def load_pool(path: Path) -> list[Record]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = json.loads(line)["fields"]
        url = fields.get("url") or ""
        doi = (fields.get("doi") or "").lower() or None
        arxiv = _ARXIV_ID.search(url) if "arxiv.org" in url else None
        if doi and doi.startswith("10.48550/"):
            found = _ARXIV_ID.search(doi)
            arxiv = arxiv or found
            doi = None
        records.append(
            Record(
                title=fields["title"],
                authors=[a.strip() for a in fields["author"].split(" and ") if a.strip()],
                year=str(fields.get("year") or ""),
                venue=fields.get("booktitle") or fields.get("journal"),
                doi=doi,
                arxiv_id=arxiv.group(1) if arxiv else None,
                dblp_key=url.split("/rec/", 1)[1] if "dblp.org/rec/" in url else None,
            )
        )
    return records


def _person(name: str) -> str:
    """A name as Crossref and arXiv print it: no DBLP disambiguation number, no entity."""
    return re.sub(r"\s+\d{4}$", "", html.unescape(name))


def _split_name(name: str) -> tuple[str, str]:
    parts = _person(name).split()
    return " ".join(parts[:-1]), parts[-1] if parts else name


# -- the replay: each upstream answers from the pool, in its own response shape ---------


class PoolReplay:
    """Answers DBLP, Crossref and arXiv queries from the pool."""

    def __init__(self, pool: list[Record]) -> None:
        self.pool = pool
        self.dblp = [r for r in pool if r.dblp_key or r.arxiv_id]
        self.crossref = {r.doi: r for r in pool if r.doi}
        self.arxiv = {r.arxiv_id: r for r in pool if r.arxiv_id}
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

    # DBLP ------------------------------------------------------------------------------

    def _dblp_hit(self, record: Record, score: int) -> dict[str, Any]:
        info: dict[str, Any] = {
            "authors": {"author": [{"@pid": "0/0", "text": a} for a in record.authors]},
            "title": record.title.rstrip(".") + ".",
            "year": record.year,
        }
        if record.dblp_key:
            info |= {"venue": record.venue, "type": "Conference and Workshop Papers"}
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
            "type": "proceedings-article",
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


# -- the run ---------------------------------------------------------------------------


def _bibtex(entry: dict[str, Any]) -> str:
    lines = [f"@{entry['bibtex_type']}{{{entry['bibtex_key']},"]
    for name, value in entry["fields"].items():
        lines.append(f"  {name} = {{{value}}},")
    return "\n".join(lines) + "\n}\n"


def _ece(points: list[tuple[float, bool]], bins: int = 10) -> float:
    total = len(points)
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, ok) for c, ok in points if low < c <= high or (index == 0 and c == 0)]
        if inside:
            confidence = sum(c for c, _ in inside) / len(inside)
            accuracy = sum(ok for _, ok in inside) / len(inside)
            error += len(inside) / total * abs(confidence - accuracy)
    return error


async def _run(entries: list[dict[str, Any]], env: dict[str, str], cache: Path | None) -> list[Any]:
    runtime = load_runtime(env)
    network = Network(runtime.settings)
    verifier = Verifier(network, AnswerStore(cache), mailto="bench@example.org")
    cited = [read_bibtex(_bibtex(entry))[0] for entry in entries]
    done = 0

    def progress(finished: int, total: int, row: Any) -> None:
        nonlocal done
        done = finished
        if finished % 50 == 0 or finished == total:
            print(f"  {finished}/{total}", file=sys.stderr, flush=True)

    try:
        result = await verifier.verify_many(cited, progress)
    finally:
        await network.aclose()
    return result.results


def report(entries: list[dict[str, Any]], rows: list[Any], pool: list[Record]) -> dict[str, Any]:
    pool_titles = {" ".join(_words(r.title)) for r in pool}
    tp = fp = fn = tn = uncertain = 0
    by_type: dict[str, list[bool]] = collections.defaultdict(list)
    by_tier: dict[str, list[bool]] = collections.defaultdict(list)
    points = []
    fp_known = known = 0
    for entry, row in zip(entries, rows, strict=True):
        flagged = row.verdict in ("miscited", "not_found")
        uncertain += row.verdict == "uncertain"
        if entry["label"] == "VALID":
            fp += flagged
            tn += not flagged
            if " ".join(_words(entry["fields"]["title"])) in pool_titles:
                known += 1
                fp_known += flagged
            points.append((row.confidence, row.verdict == "verified"))
        else:
            tp += flagged
            fn += not flagged
            by_type[entry["hallucination_type"]].append(flagged)
            by_tier[str(entry.get("difficulty_tier"))].append(flagged)
            points.append((row.confidence, flagged))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "entries": len(entries),
        "detection_rate": recall,
        "false_positive_rate": fp / (fp + tn) if fp + tn else 0.0,
        "false_positive_rate_pool_known": fp_known / known if known else 0.0,
        "valid_entries_pool_known": known,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "precision": precision,
        "uncertain_share": uncertain / len(entries),
        "ece": _ece(points),
        "per_type": {k: sum(v) / len(v) for k, v in sorted(by_type.items())},
        "per_tier": {k: sum(v) / len(v) for k, v in sorted(by_tier.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", nargs="?", type=Path, default=DEFAULT_DIR / "dev_public.jsonl")
    parser.add_argument("--pool", type=Path, default=DEFAULT_DIR / "real_records_pool.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="only the first N entries")
    parser.add_argument("--cache", type=Path, help="keep upstream answers here between runs")
    parser.add_argument("--rows", type=Path, help="write every row (JSON Lines) here")
    args = parser.parse_args()
    entries = [json.loads(line) for line in args.split.read_text(encoding="utf-8").splitlines()]
    if args.limit:
        entries = entries[: args.limit]
    pool = load_pool(args.pool)
    replay = PoolReplay(pool)
    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream().start(Path(tmp)) as upstream:
        replay.route(upstream)
        env = {**upstream.isolated_env(Path(tmp)), "DOIGET_EMAIL": "bench@example.org"}
        started = time.monotonic()
        rows = anyio.run(_run, entries, env, args.cache)
        seconds = time.monotonic() - started
        requests = len(upstream.requests)
    result = report(entries, rows, pool)
    result["requests_per_reference"] = requests / len(entries)
    result["seconds_per_reference"] = seconds / len(entries)
    if args.rows:
        with args.rows.open("w", encoding="utf-8") as handle:
            for entry, row in zip(entries, rows, strict=True):
                shown = {"label": entry["label"], "type": entry.get("hallucination_type")}
                handle.write(
                    json.dumps(shown | row.model_dump(mode="json", exclude_unset=True)) + "\n"
                )
    print(json.dumps(result, indent=2))
    width = max(len(k) for k in result["per_type"])
    print("\n| measure | value |\n|---|---|")
    shown = (
        "entries", "detection_rate", "false_positive_rate", "false_positive_rate_pool_known",
        "f1", "precision", "uncertain_share", "ece", "requests_per_reference",
        "seconds_per_reference",
    )  # fmt: skip
    for name in shown:
        value = result[name]
        print(f"| {name} | {value:.3f} |" if isinstance(value, float) else f"| {name} | {value} |")
    print("\n| type | detected |\n|---|---|")
    for name, rate in result["per_type"].items():
        print(f"| {name:<{width}} | {rate:.3f} |")
    for tier, rate in result["per_tier"].items():
        print(f"| tier {tier} | {rate:.3f} |")


if __name__ == "__main__":
    main()
