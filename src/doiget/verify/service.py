"""Checking cited works against the record: lookups, the matched work, the verdict.

Per reference, at most :data:`MAX_REQUESTS` upstream requests, in this order, each
only when the earlier ones have not settled the question (a record with the cited title
and authors settles it, unless it is a preprint of a work cited at a published venue,
whose published version may have taken another title):

1. the cited identifier: arXiv id or arXiv DOI at arXiv, any other DOI at Crossref, a
   PMID (with neither) at PubMed;
2. DBLP, the title's words (skipped when the DOI's Crossref record already is the
   cited title with the cited authors);
3. Crossref ``query.bibliographic`` with the first author's family name;
4. DBLP, the family names of the first two authors (finds a paper whose title was
   changed by a word or two);
5. OpenAlex and Semantic Scholar, the title, each only when the capability profile
   enables it (``DOIGET_ENABLE_OPENALEX``, ``DOIGET_ENABLE_S2``);
6. when nothing matched yet: arXiv, the title's words, for a work cited as a preprint
   or with neither venue nor DOI; or PubMed (esearch on the title words, then efetch:
   two requests) for a work cited with a PMID or in a journal the venue list does not
   know (biomedical journals are PubMed's, not DBLP's);
7. Crossref, the matched work's DOI, for its retraction and correction notices.

A source that fails (5xx, 429, timeout, network) is named in the row; when nothing
matched and a source failed, the verdict is ``uncertain``, never ``not_found``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from doiget.cite.bibtex import to_bibtex
from doiget.cite.citekey import citekey
from doiget.cite.csl import to_csl
from doiget.errors import DoigetError
from doiget.integrity import notices
from doiget.models import Work
from doiget.net.network import Network
from doiget.progress import in_order
from doiget.refs import fetchable_ref, parse_ref
from doiget.runtime import Runtime
from doiget.sources.pubmed import EutilsIdentity
from doiget.verify import match as m
from doiget.verify.calibration import calibrated
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import (
    LISTED_AUTHORS,
    Corrected,
    Match,
    Problem,
    Row,
    RowError,
    Verification,
    Version,
)
from doiget.verify.lookup import AnswerStore, Lookups, Offload, here
from doiget.verify.names import compare_authors
from doiget.verify.text import words

MAX_REQUESTS: Final = 9
CACHE_DIR: Final = "verify-answers"
# References in flight: enough that one slow upstream (arXiv's 3 s) never idles the others.
CONCURRENT: Final = 16
# The opt-in indexes a title is looked up in when enabled, in this order.
INDEXES: Final = ("openalex", "semantic_scholar")

Progress = Callable[[int, int, Row], Awaitable[None] | None]


@dataclass
class _Found:
    """What the lookups turned up for one reference; ``offload`` runs the matching."""

    offload: Offload = field(default=here)
    doi_work: Work | None = None
    doi_unresolved: bool = False
    candidates: list[m.Candidate] | None = None
    seen: list[Work] = field(default_factory=list)  # every record any lookup returned

    async def add(self, cited: CitedWork, works: Sequence[Work]) -> None:
        self.seen.extend(works)
        if not works:
            return
        found = await self.offload(lambda: [m.candidate(cited, work) for work in works])
        kept = [one for one in found if one is not None]
        if kept:
            self.candidates = [*(self.candidates or []), *kept]

    @property
    def best(self) -> m.Candidate | None:
        return min(self.candidates or [], key=lambda c: c.rank, default=None)

    def rival(self, cited: CitedWork) -> m.Candidate | None:
        """Another work exactly as close to the citation as the best one (same title
        relation, same share of the cited authors, same fit of the cited year), when the
        cited identifier does not pick one of them."""
        best = self.best
        if best is None or best.relation == "near":
            return None  # a near miss is a wrong title whichever work was meant
        if self.doi_work is not None and m.same_work(self.doi_work, best.work):
            return None
        closeness = m.closeness(cited, best)
        return next(
            (
                other
                for other in self.candidates or []
                if m.closeness(cited, other) == closeness and not m.same_work(other.work, best.work)
            ),
            None,
        )

    def settled(self, cited: CitedWork) -> bool:
        """Whether a candidate is the cited title with the cited authors, and not only a
        preprint of a work cited at a published venue (its published version may carry
        another title: the searches by author go on to find it)."""
        best = self.best
        if best is None or best.relation == "near" or best.authors.unmatched:
            return False
        return not (m.is_preprint(best.work) and _cited_as_published(cited))


class Verifier:
    """Checks cited works through one process's network and answer store."""

    def __init__(
        self,
        network: Network,
        store: AnswerStore,
        mailto: str | None = None,
        *,
        indexes: Sequence[str] = (),
        identity: EutilsIdentity | None = None,
        s2_key: str | None = None,
        offload: Offload = here,
    ) -> None:
        self._offload = offload
        self._network = network
        self._store = store
        self._mailto = mailto
        self._indexes = tuple(indexes)
        self._identity = identity
        self._s2_key = s2_key

    @classmethod
    def of(cls, runtime: Runtime, offload: Offload = here) -> Verifier:
        """The verifier of a process: its network, answers kept under the data directory,
        and the opt-in indexes (OpenAlex, Semantic Scholar) its capability profile
        enables; matching runs through ``offload``."""
        from doiget.sources.semantic_scholar import api_key_of

        settings = runtime.settings
        indexes = [name for name in INDEXES if runtime.profile.metadata.allows(name)]
        return cls(
            runtime.network(),
            AnswerStore(settings.data_dir / CACHE_DIR),
            settings.email,
            indexes=indexes,
            identity=EutilsIdentity.from_settings(settings),
            s2_key=api_key_of(settings),
            offload=offload,
        )

    async def aclose(self) -> None:
        """Nothing of its own to release: the runtime owns the network."""

    async def verify_many(
        self, cited: Sequence[CitedWork], progress: Progress | None = None
    ) -> Verification:
        """One row per cited work, in order; ``progress(done, total, row)`` after each."""
        rows = await in_order(cited, self.verify, at_once=CONCURRENT, progress=progress)
        return Verification(ok=True, results=rows)

    @property
    def indexes(self) -> tuple[str, ...]:
        """The opt-in indexes (OpenAlex, Semantic Scholar) this verifier may ask."""
        return self._indexes

    def lookups(self) -> Lookups:
        """A fresh set of questions, counted apart, asked through this verifier's
        network and kept answers."""
        return Lookups(
            self._network, self._store, self._mailto, self._identity, self._s2_key, self._offload
        )

    async def record_of(self, cited: CitedWork) -> Work | None:
        """The record the cited DOI or arXiv id names, when it is the cited work: its
        title is the cited one (or that title without its subtitle), or a near miss by
        the cited authors. None when the identifier names another work or nothing."""
        if _refusal(cited) is not None:
            return None
        found = _Found(self._offload)
        await _by_identifier(cited, self.lookups(), found)
        best = found.best
        if best is None or (best.relation == "near" and not best.authors.pairs):
            return None
        return best.work

    async def verify(self, cited: CitedWork) -> Row:
        """The verdict on one cited work."""
        lookups = self.lookups()
        refusal = _refusal(cited)
        if refusal is not None:
            return Row(key=cited.key, verdict="uncertain", confidence=0.0,
                       note=refusal.message, error=refusal)  # fmt: skip
        if cited.empty:
            note = "nothing to look up: the reference has no title, DOI, arXiv id or PMID"
            return calibrated(Row(key=cited.key, verdict="uncertain", confidence=0.5, note=note))
        found = _Found(self._offload)
        await _by_identifier(cited, lookups, found)
        if cited.title:
            await _by_title(cited, lookups, found, self._indexes)
        decided = await _decide(cited, lookups, found)
        return await self._offload(lambda: calibrated(decided))


def _refusal(cited: CitedWork) -> RowError | None:
    """Why ``cited`` is not checked: it could not be read, or its DOI is not one doiget
    sends upstream (a '.' or '..' part would move the request to another path)."""
    if cited.unread is not None:
        return RowError(code=cited.unread.code, message=cited.unread.message)
    if cited.doi:
        try:
            parse_ref(cited.doi)
        except DoigetError as error:
            return RowError(code=error.code.value, message=error.message)
    return None


async def _by_identifier(cited: CitedWork, lookups: Lookups, found: _Found) -> None:
    arxiv_id = cited.arxiv_id
    if arxiv_id:
        ok, work = await lookups.arxiv_id(arxiv_id)
    elif cited.doi:
        ok, work = await lookups.crossref_doi(cited.doi)
    elif cited.pmid:
        works = await lookups.pubmed_records([cited.pmid])
        work = works[0] if works else None
        ok = "pubmed" not in lookups.failures
        if cited.title:
            await found.add(cited, works)
            return
    else:
        return
    found.doi_work = work
    found.doi_unresolved = ok and work is None
    if work is not None and not cited.title:
        # Cited by its identifier alone: the record it names is the work meant.
        comparison = await found.offload(lambda: compare_authors(cited.authors, work.authors))
        found.candidates = [m.Candidate(work, "same", 1.0, comparison)]
    elif work is not None:
        await found.add(cited, [work])


async def _by_title(
    cited: CitedWork, lookups: Lookups, found: _Found, indexes: Sequence[str]
) -> None:
    title = cited.title or ""
    doi_settles = found.settled(cited) and found.doi_work is not None
    if not (doi_settles and found.doi_work is not None and found.doi_work.source == "crossref"):
        await found.add(cited, await lookups.dblp_search(" ".join(words(title))))
    if found.settled(cited):
        return
    first = cited.authors[0].family if cited.authors else None
    await found.add(cited, await lookups.crossref_search(title, first))
    if found.settled(cited):
        return
    families = [author.family for author in cited.authors[:2] if author.family]
    if families:
        await found.add(cited, await lookups.dblp_search(" ".join(words(" ".join(families)))))
        if found.settled(cited):
            return
    for index in indexes:
        await found.add(cited, await lookups.index_search(index, title))
        if found.settled(cited):
            return
    if found.best is not None:
        return
    if _may_be_preprint(cited):
        await found.add(cited, await lookups.arxiv_title(title))
    elif _may_be_biomedical(cited):
        await found.add(cited, await lookups.pubmed_title(title))


def _cited_as_published(cited: CitedWork) -> bool:
    """Whether the cited venue is one that publishes (not a preprint server)."""
    from doiget.verify.venues import identify

    venue = identify(cited.venue)
    return bool(cited.venue) and (venue is None or venue.kind != "preprint")


def _renamed(cited: CitedWork, versions: Sequence[Work], seen: Sequence[Work]) -> Work | None:
    """The published version of a cited preprint that took another title: when every
    version found is a preprint and the reference cites a published venue, a record at
    that venue, by every cited author, no older than the preprint, whose title shares
    words with the cited one. None when there is none."""
    if not cited.authors or not _cited_as_published(cited):
        return None
    if any(not m.is_preprint(version) for version in versions):
        return None
    earliest = min((version.year for version in versions if version.year), default=0)
    for work in seen:
        if m.is_preprint(work) or not work.title or (work.year or earliest) < earliest:
            continue
        if m.renamed_from(cited, work):
            return work
    return None


def _may_be_preprint(cited: CitedWork) -> bool:
    """Whether an arXiv title search may find the cited work: it is cited as a
    preprint, or with neither venue nor DOI (a published paper is DBLP's or Crossref's)."""
    from doiget.verify.venues import identify

    venue = identify(cited.venue)
    return (venue is not None and venue.kind == "preprint") or not (cited.venue or cited.doi)


def _may_be_biomedical(cited: CitedWork) -> bool:
    """Whether PubMed may hold the cited work: it is cited with a PMID, or in a venue
    that is not one of the (computing) venues and preprint servers doiget knows."""
    from doiget.verify.venues import identify

    return bool(cited.pmid) or (bool(cited.venue) and identify(cited.venue) is None)


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


def _detail_problems(
    cited: CitedWork, best: m.Candidate, work: Work, versions: Sequence[Work]
) -> list[Problem]:
    """What the cited authors, year and venue contradict in the work's versions (the
    authors against the version whose list they fit best)."""
    comparison = min(
        (compare_authors(cited.authors, v.authors) for v in versions if v.authors),
        key=lambda c: (len(c.unmatched), len(c.missing)),
        default=best.authors,
    )
    author_work = next((v for v in versions if v.authors), work)
    return [
        *m.author_problems(cited, author_work, comparison),
        *m.year_problems(cited, versions),
        *m.venue_problems(cited, versions),
    ]


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


def _corrected(cited: CitedWork, work: Work) -> Corrected:
    """The work's citations under the cited key; past :data:`LISTED_AUTHORS` names the
    BibTeX ends in "and others" and the CSL-JSON lists the first (styles cut far sooner)."""
    entry_key = cited.key or citekey(work)
    listed = replace(work, authors=work.authors[:LISTED_AUTHORS])
    return Corrected(
        bibtex=to_bibtex(work, key=entry_key, max_authors=LISTED_AUTHORS),
        csl=to_csl(listed, entry_key),
    )


def _match(work: Work, versions: Sequence[Work], newer: Work | None) -> Match:
    sources = sorted({version.source for version in versions})
    newer_version = (
        Version(ref=fetchable_ref(newer.doi, newer.arxiv_id), venue=newer.venue, year=newer.year)
        if newer is not None
        else None
    )
    # A record without an identifier (DBLP's entry of a NeurIPS paper) is reached by the
    # identifier of another record of the same work (its arXiv preprint).
    refs = (fetchable_ref(version.doi, version.arxiv_id) for version in [work, *versions])
    return Match(
        ref=next((ref for ref in refs if ref), None),
        title=work.title,
        authors=[author.display for author in work.authors[:LISTED_AUTHORS]],
        authors_total=len(work.authors) if len(work.authors) > LISTED_AUTHORS else None,
        year=work.year,
        venue=work.venue or ("arXiv" if work.source == "arxiv" else None),
        type=work.type,
        sources=sources,
        newer_version=newer_version,
    )


def _describe(work: Work) -> str:
    """'ref "Title" (First author, year)' for a note."""
    first = work.authors[0].display if work.authors else "no author"
    ref = fetchable_ref(work.doi, work.arxiv_id) or work.source
    return f'{ref} "{work.title}" ({first}, {work.year or "no year"})'


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
        note = "no real work matches the title, authors and identifiers cited"
        return Row(key=cited.key, verdict="not_found", confidence=0.5, problems=problems, note=note)
    rival = await found.offload(lambda: found.rival(cited))
    if rival is not None:
        note = (
            f"two works are equally close: {_describe(best.work)} and {_describe(rival.work)}; "
            "cite the DOI or arXiv id of the one meant"
        )
        return Row(key=cited.key, verdict="uncertain", confidence=0.5, note=note)
    versions = await found.offload(lambda: _versions(best.work, found.candidates or []))
    renamed = await found.offload(lambda: _renamed(cited, versions, found.seen))
    if renamed is not None:  # cited under its preprint's title: the title is what differs
        versions = [renamed, *versions]
    work, newer = _pick(cited, versions)
    retitled = renamed is not None and work is renamed
    work = await _integrity(work, lookups)
    versions = [work, *(v for v in versions if v is not work)]
    failed = _failed(lookups) or None

    def row() -> Row:  # a record of thousands of authors: matched and written off the loop
        problems = []
        if best.relation == "near" or retitled:
            problems.append(
                Problem(field="title", kind="title_differs", cited=cited.title, actual=work.title)
            )
        problems += _detail_problems(cited, best, work, versions)
        problems += _doi_problems(cited, found, work)
        if work.retracted:
            retraction = next((n for n in work.integrity if n.is_retraction), None)
            problems.append(Problem(field="integrity", kind="retracted", cited=cited.title,
                                    actual=retraction.doi if retraction else None))  # fmt: skip
        return Row(
            key=cited.key,
            verdict="miscited" if problems else "verified",
            confidence=0.5,
            problems=problems,
            match=_match(work, versions, newer),
            integrity=notices(work),
            corrected=_corrected(cited, work),
            note=failed,
        )

    return await found.offload(row)
