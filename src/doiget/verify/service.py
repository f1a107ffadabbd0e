"""Checking cited works against the record: lookups, the matched work, the verdict.

Per reference, at most :data:`MAX_REQUESTS` upstream requests, in this order, each
only when the earlier ones have not settled the question:

1. the cited identifier: arXiv id or arXiv DOI at arXiv, any other DOI at Crossref;
2. DBLP, the title's words (skipped when the DOI's Crossref record already is the
   cited title with the cited authors);
3. Crossref ``query.bibliographic`` with the first author's family name;
4. DBLP, the family names of the first two authors (finds a paper whose title was
   changed by a word or two);
5. arXiv, the title's words, when nothing matched and the work is cited as a
   preprint or with neither venue nor DOI;
6. Crossref, the matched work's DOI, for its retraction and correction notices.

A source that fails (5xx, 429, timeout, network) is named in the row; when nothing
matched and a source failed, the verdict is ``uncertain``, never ``not_found``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import anyio

from doiget.cite.bibtex import to_bibtex
from doiget.cite.citekey import citekey
from doiget.cite.csl import to_csl
from doiget.models import Work
from doiget.net.network import Network
from doiget.refs import fetchable_ref
from doiget.runtime import Runtime
from doiget.verify import match as m
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import (
    Corrected,
    Match,
    Notice,
    Problem,
    Row,
    Verification,
    Version,
)
from doiget.verify.lookup import AnswerStore, Lookups
from doiget.verify.names import compare_authors
from doiget.verify.text import words

MAX_REQUESTS: Final = 6
CACHE_DIR: Final = "verify-answers"
# References in flight: enough that one slow upstream (arXiv's 3 s) never idles the others.
CONCURRENT: Final = 16
# Problems that may come from an honest slip (an off-by-one year, a venue's other
# name) weigh less in the confidence of a ``miscited`` verdict.
_SOFT: Final = frozenset({"year_differs", "venue_differs", "venue_unknown", "authors_reordered"})

Progress = Callable[[int, int, Row], Awaitable[None] | None]


@dataclass
class _Found:
    """What the lookups turned up for one reference."""

    doi_work: Work | None = None
    doi_unresolved: bool = False
    candidates: list[m.Candidate] | None = None
    records: int = 0

    def add(self, cited: CitedWork, works: Sequence[Work]) -> None:
        self.records += len(works)
        for work in works:
            found = m.candidate(cited, work)
            if found is not None:
                self.candidates = [*(self.candidates or []), found]

    @property
    def best(self) -> m.Candidate | None:
        return min(self.candidates or [], key=lambda c: c.rank, default=None)

    def settled(self) -> bool:
        """Whether a candidate is the cited title with the cited authors."""
        best = self.best
        return best is not None and best.relation != "near" and not best.authors.unmatched


class Verifier:
    """Checks cited works through one process's network and answer store."""

    def __init__(self, network: Network, store: AnswerStore, mailto: str | None = None) -> None:
        self._network = network
        self._store = store
        self._mailto = mailto

    @classmethod
    def of(cls, runtime: Runtime) -> Verifier:
        """The verifier of a process: its network, answers kept under the data directory."""
        settings = runtime.settings
        return cls(runtime.network(), AnswerStore(settings.data_dir / CACHE_DIR), settings.email)

    async def aclose(self) -> None:
        """Nothing of its own to release: the runtime owns the network."""

    async def verify_many(
        self, cited: Sequence[CitedWork], progress: Progress | None = None
    ) -> Verification:
        """One row per cited work, in order; ``progress(done, total, row)`` after each."""
        rows: list[Row | None] = [None] * len(cited)
        done = 0
        limit = anyio.Semaphore(CONCURRENT)

        async def one(index: int) -> None:
            nonlocal done
            async with limit:
                row = await self.verify(cited[index])
            rows[index] = row
            done += 1
            if progress is not None:
                reported = progress(done, len(cited), row)
                if reported is not None:
                    await reported

        async with anyio.create_task_group() as group:
            for index in range(len(cited)):
                group.start_soon(one, index)
        return Verification(ok=True, results=[row for row in rows if row is not None])

    async def verify(self, cited: CitedWork) -> Row:
        """The verdict on one cited work."""
        lookups = Lookups(self._network, self._store, self._mailto)
        if cited.empty:
            note = "nothing to look up: the reference has no title, DOI or arXiv id"
            return Row(key=cited.key, verdict="uncertain", confidence=0.5, note=note)
        found = _Found()
        await _by_identifier(cited, lookups, found)
        if cited.title:
            await _by_title(cited, lookups, found)
        return await _decide(cited, lookups, found)


async def _by_identifier(cited: CitedWork, lookups: Lookups, found: _Found) -> None:
    arxiv_id = cited.arxiv_id
    if arxiv_id:
        ok, work = await lookups.arxiv_id(arxiv_id)
    elif cited.doi:
        ok, work = await lookups.crossref_doi(cited.doi)
    else:
        return
    found.doi_work = work
    found.doi_unresolved = ok and work is None
    if work is not None:
        found.add(cited, [work])


async def _by_title(cited: CitedWork, lookups: Lookups, found: _Found) -> None:
    title = cited.title or ""
    doi_settles = found.settled() and found.doi_work is not None
    if not (doi_settles and found.doi_work is not None and found.doi_work.source == "crossref"):
        found.add(cited, await lookups.dblp_search(" ".join(words(title))))
    if found.settled():
        return
    first = cited.authors[0].family if cited.authors else None
    found.add(cited, await lookups.crossref_search(title, first))
    if found.settled():
        return
    families = [author.family for author in cited.authors[:2] if author.family]
    if families:
        found.add(cited, await lookups.dblp_search(" ".join(words(" ".join(families)))))
        if found.settled():
            return
    if found.best is None and _may_be_preprint(cited):
        found.add(cited, await lookups.arxiv_title(title))


def _may_be_preprint(cited: CitedWork) -> bool:
    """Whether an arXiv title search may find the cited work: it is cited as a
    preprint, or with neither venue nor DOI (a published paper is DBLP's or Crossref's)."""
    from doiget.verify.venues import identify

    venue = identify(cited.venue)
    return (venue is not None and venue.kind == "preprint") or not (cited.venue or cited.doi)


def _versions(best: Work, candidates: Sequence[m.Candidate]) -> list[Work]:
    """``best`` and every other record of the same work, best first."""
    versions = [best]
    for other in candidates:
        if other.work is not best and m.same_work(best, other.work):
            versions.append(other.work)
    return versions


def _pick(cited: CitedWork, versions: list[Work]) -> tuple[Work, Work | None]:
    """The version the citation means, and a published version of a cited preprint."""
    from doiget.verify.venues import identify

    cited_venue = identify(cited.venue)
    published = [v for v in versions if not m.is_preprint(v)]
    preprints = [v for v in versions if m.is_preprint(v)]
    wants_preprint = bool(cited.arxiv_id) or (
        cited_venue is not None and cited_venue.kind == "preprint"
    )
    if wants_preprint and preprints:
        return preprints[0], (published[0] if published else None)
    return (published or versions)[0], None


def _doi_problems(cited: CitedWork, found: _Found, work: Work) -> list[Problem]:
    if found.doi_unresolved:
        cited_id = cited.arxiv_id or cited.doi
        actual = fetchable_ref(work.doi, work.arxiv_id)
        return [Problem(field="doi", kind="doi_unresolved", cited=cited_id, actual=actual)]
    if found.doi_work is not None and not m.same_work(found.doi_work, work):
        return [
            Problem(
                field="doi",
                kind="doi_other_work",
                cited=cited.arxiv_id or cited.doi,
                actual=found.doi_work.title,
            )
        ]
    return []


async def _integrity(work: Work, lookups: Lookups) -> Work:
    """``work`` with its Crossref notices, fetched when its DOI's record was not."""
    if work.source == "crossref" or not work.doi or work.doi.startswith("10.48550/"):
        return work
    if lookups.requests >= MAX_REQUESTS:
        return work
    ok, record = await lookups.crossref_doi(work.doi)
    return record if ok and record is not None and m.same_work(record, work) else work


def _notices(work: Work) -> list[Notice] | None:
    notices = [
        Notice(kind=n.kind, notice_doi=n.doi, date=n.date, source=n.source)
        for n in work.updates
        if n.direction == "updated-by"
    ]
    return notices or None


def _corrected(cited: CitedWork, work: Work) -> Corrected:
    entry_key = cited.key or citekey(work)
    return Corrected(bibtex=to_bibtex(work, key=entry_key), csl=to_csl(work, entry_key))


def _match(work: Work, versions: Sequence[Work], newer: Work | None) -> Match:
    sources = sorted({version.source for version in versions})
    newer_version = (
        Version(ref=fetchable_ref(newer.doi, newer.arxiv_id), venue=newer.venue, year=newer.year)
        if newer is not None
        else None
    )
    return Match(
        ref=fetchable_ref(work.doi, work.arxiv_id),
        title=work.title,
        authors=[author.display for author in work.authors],
        year=work.year,
        venue=work.venue or ("arXiv" if work.source == "arxiv" else None),
        type=work.type,
        sources=sources,
        newer_version=newer_version,
    )


def _failed(lookups: Lookups) -> str:
    return "; ".join(f"{source} failed ({message})" for source, message in lookups.failures.items())


async def _decide(cited: CitedWork, lookups: Lookups, found: _Found) -> Row:
    best = found.best
    if best is None:
        problems: list[Problem] = []
        if found.doi_unresolved:
            problems.append(
                Problem(field="doi", kind="doi_unresolved", cited=cited.arxiv_id or cited.doi)
            )
        elif found.doi_work is not None:
            cited_id = cited.arxiv_id or cited.doi
            other = found.doi_work.title
            problems.append(
                Problem(field="doi", kind="doi_other_work", cited=cited_id, actual=other)
            )
        if lookups.failures:
            note = f"no match found, but {_failed(lookups)}; check again later"
            return Row(
                key=cited.key, verdict="uncertain", confidence=0.5, problems=problems, note=note
            )
        confidence = 0.9 if found.records or lookups.requests > 1 else 0.8
        note = "no real work matches the title, authors and identifiers cited"
        return Row(
            key=cited.key, verdict="not_found", confidence=confidence, problems=problems, note=note
        )
    versions = _versions(best.work, found.candidates or [])
    work, newer = _pick(cited, versions)
    work = await _integrity(work, lookups)
    versions = [work, *(v for v in versions if v is not work)]
    problems = []
    if best.relation == "near":
        problems.append(
            Problem(field="title", kind="title_differs", cited=cited.title, actual=work.title)
        )
    comparison = min(
        (compare_authors(cited.authors, v.authors) for v in versions if v.authors),
        key=lambda c: (len(c.unmatched), len(c.missing)),
        default=best.authors,
    )
    author_work = next((v for v in versions if v.authors), work)
    problems += m.author_problems(cited, author_work, comparison)
    problems += m.year_problems(cited, versions)
    problems += m.venue_problems(cited, versions)
    problems += _doi_problems(cited, found, work)
    if work.retracted:
        retraction = next((n for n in work.updates if n.is_retraction), None)
        problems.append(Problem(field="integrity", kind="retracted", cited=cited.title,
                                actual=retraction.doi if retraction else None))  # fmt: skip
    verdict = "miscited" if problems else "verified"
    return Row(
        key=cited.key,
        verdict=verdict,
        confidence=_confidence(verdict, best, problems, versions),
        problems=problems,
        match=_match(work, versions, newer),
        integrity=_notices(work),
        corrected=_corrected(cited, work),
        note=f"{_failed(lookups)}" if lookups.failures else None,
    )


def _confidence(
    verdict: str, best: m.Candidate, problems: Sequence[Problem], versions: Sequence[Work]
) -> float:
    """How likely the verdict is right, from the strength of the evidence (the numbers
    are the shares measured on the benchmark's dev split, README)."""
    sources = len({version.source for version in versions})
    if verdict == "verified":
        if best.relation == "same":
            return 0.97 if sources > 1 else 0.95
        return 0.85
    if all(problem.kind in _SOFT for problem in problems):
        return 0.8
    return 0.95
