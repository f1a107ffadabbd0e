"""Metadata resolution: which upstreams say what about a ref, and where its PDF may be.

DOI: Crossref (metadata; a failure other than "unknown DOI" is not fatal), then
Unpaywall (licence, OA status, OA locations), then the optional sources the
capability profile enables (OpenAlex, Semantic Scholar, DOAJ) to fill gaps.
arXiv id (or an arXiv DataCite DOI, 10.48550/arXiv.*): the arXiv API.
Nothing here downloads a PDF: it only lists candidates for the fetcher.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Final, TypeVar

from doiget.capability import CapabilityProfile
from doiget.config import Settings
from doiget.errors import DoigetError, ErrorCode
from doiget.models import OpenAccess, Work, merge_works
from doiget.net.network import Network
from doiget.net.offline import Offline
from doiget.papers.store import utc_now
from doiget.refs import Ref, arxiv_ref_for
from doiget.secret import revealed
from doiget.sources import arxiv, crossref, doaj, openalex, semantic_scholar, unpaywall

logger = logging.getLogger("doiget.papers")

T = TypeVar("T")

_ARXIV_URL: Final = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PdfCandidate:
    """A URL that may serve the PDF, and which client (allowlist) may fetch it."""

    client: str  # "oa-publisher" or "arxiv"
    url: str
    license: str | None


@dataclass(frozen=True)
class Resolution:
    """Everything the metadata round learned about one ref."""

    ref: Ref
    work: Work
    source: str
    open_access: OpenAccess | None = None
    candidates: tuple[PdfCandidate, ...] = ()
    consulted: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    # The sources that were asked and did not answer, with their errors.
    unanswered: tuple[tuple[str, DoigetError], ...] = ()

    def timed_out(self) -> list[tuple[str, DoigetError]]:
        """The sources whose lookup ran out of time (what they might have listed,
        such as an Open Access copy, is unknown)."""
        return [(name, e) for name, e in self.unanswered if e.code is ErrorCode.FETCH_TIMEOUT]

    @property
    def license(self) -> str | None:
        """The best licence known: Unpaywall's best location, else the metadata's."""
        oa_license = self.open_access.license if self.open_access else None
        return oa_license or self.work.license

    @property
    def oa_url(self) -> str | None:
        """The first OA PDF URL known, reported but never followed by metadata-only calls."""
        return self.candidates[0].url if self.candidates else None


def _arxiv_id_in(url: str | None) -> str | None:
    match = _ARXIV_URL.search(url or "")
    return match.group(1) if match else None


class _Failures:
    """The metadata sources that failed during one resolution, and why.

    A failure that means no connection could be made (see :mod:`doiget.net.offline`)
    is logged at DEBUG: when every source fails that way the call's own error says
    so once, instead of one warning per source.
    """

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.errors: list[DoigetError] = []
        self.sources: list[str] = []

    def add(self, name: str, error: DoigetError) -> None:
        self.notes.append(f"{name}: {error.code.value}: {error.message}")
        self.errors.append(error)
        self.sources.append(name)
        offline = bool(error.details and error.details.get("offline"))
        level = logging.DEBUG if offline else logging.WARNING
        logger.log(level, "%s lookup failed, continuing: %s", name, error.message)

    def unanswered(self, doi: str) -> DoigetError:
        """The error of a resolution no source answered."""
        offline = [e for e in self.errors if e.details and e.details.get("offline")]
        if offline and len(offline) == len(self.errors):
            others = len(offline) - 1
            more = f" (nor {others} other source{'s' if others != 1 else ''})" if others else ""
            first = offline[0].details or {}
            said = Offline(first["offline"]).describe(str(first.get("host")))
            return DoigetError(
                ErrorCode.NETWORK_ERROR,
                f"{said}{more}, so {doi} could not be resolved; check the network connection.",
                details=first,
            )
        codes = {error.code for error in self.errors}
        code = ErrorCode.FETCH_TIMEOUT if codes == {ErrorCode.FETCH_TIMEOUT} else None
        # A source that was refused or answered out of shape keeps its denial, so the
        # agent sees why (schema_drift, a redirect off the allowlist ...).
        denial = next((error.denial for error in self.errors if error.denial), None)
        return DoigetError(
            code or ErrorCode.NETWORK_ERROR,
            f"no metadata source answered for {doi} ({'; '.join(self.notes)}); try again later.",
            denial,
        )


class Resolver:
    """Resolves refs through the source clients of one Network."""

    def __init__(self, settings: Settings, profile: CapabilityProfile, network: Network) -> None:
        self.settings = settings
        self.profile = profile
        self.network = network

    def metadata_sources(self, ref: Ref) -> list[str]:
        """The upstreams a resolution of ``ref`` consults, in order (for plans too)."""
        if arxiv_ref_for(ref) is not None:
            return ["arxiv"]
        # Unpaywall is asked only with a contact address (its terms require one).
        sources = ["crossref", "unpaywall"] if self.settings.email else ["crossref"]
        enabled = self.profile.metadata
        sources += [
            name
            for name, on in (("openalex", enabled.openalex), ("s2", enabled.semantic_scholar))
            if on
        ]
        if enabled.doaj:
            sources.append("doaj")
        return sources

    async def resolve(self, ref: Ref) -> Resolution:
        """Metadata and PDF candidates for ``ref``; raises NOT_FOUND when no source knows it."""
        arxiv_ref = arxiv_ref_for(ref)
        if arxiv_ref is not None:
            return await self._resolve_arxiv(ref, arxiv_ref)
        return await self._resolve_doi(ref)

    async def _resolve_arxiv(self, ref: Ref, arxiv_ref: Ref) -> Resolution:
        work = await arxiv.get_work(self.network.client("arxiv"), arxiv_ref.canonical)
        pdf = work.pdf_url or arxiv.pdf_url_for(work.arxiv_id or arxiv_ref.canonical)
        candidate = PdfCandidate("arxiv", pdf, work.license)
        return Resolution(ref, work, "arxiv", None, (candidate,), ("arxiv",))

    async def _optional(
        self, name: str, call: Callable[[], Awaitable[T]], failed: _Failures
    ) -> T | None:
        try:
            return await call()
        except DoigetError as error:
            failed.add(name, error)
            return None

    async def _resolve_doi(self, ref: Ref) -> Resolution:
        doi = ref.value
        failed = _Failures()
        notes = failed.notes
        consulted = ["crossref"]
        primary: Work | None = None
        try:
            primary = await crossref.get_work(
                self.network.client("crossref"), doi, self.settings.email
            )
            # Its update relations are what Crossref knows of the work's integrity now.
            primary = replace(primary, integrity_checked=utc_now())
        except DoigetError as error:
            if error.code is ErrorCode.NOT_FOUND:
                raise
            failed.add("crossref", error)

        record: tuple[OpenAccess, Work] | None = None
        if self.settings.email:
            consulted.append("unpaywall")
            email = self.settings.email
            record = await self._optional(
                "unpaywall",
                lambda: unpaywall.get_record(self.network.client("unpaywall"), doi, email),
                failed,
            )
        else:
            notes.append("unpaywall: skipped, DOIGET_EMAIL is not set")
        open_access = record[0] if record else None

        extras: list[Work] = []
        if record is not None:
            extras.append(record[1])
        enabled = self.profile.metadata
        if enabled.openalex:
            consulted.append("openalex")
            found = await self._optional(
                "openalex",
                lambda: openalex.get_work(
                    self.network.client("openalex"), doi, self.settings.email
                ),
                failed,
            )
            extras += [found] if found else []
        if enabled.semantic_scholar:
            consulted.append("s2")
            key = revealed(self.settings.semantic_scholar_api_key)
            found = await self._optional(
                "s2",
                lambda: semantic_scholar.get_work(self.network.client("s2"), f"DOI:{doi}", key),
                failed,
            )
            extras += [found] if found else []
        if enabled.doaj:
            consulted.append("doaj")
            found_doaj = await self._optional(
                "doaj", lambda: doaj.get_work(self.network.client("doaj"), doi), failed
            )
            extras += [found_doaj] if found_doaj else []

        if primary is None and not extras:
            raise failed.unanswered(doi)
        base = primary or extras[0]
        work = merge_works(base, *extras) if extras else base
        if work.doi is None:
            work = merge_works(work, Work(source=base.source, doi=doi))
        candidates = self._doi_candidates(work, open_access, extras)
        return Resolution(
            ref,
            work,
            base.source,
            open_access,
            tuple(candidates),
            tuple(consulted),
            tuple(notes),
            tuple(zip(failed.sources, failed.errors, strict=True)),
        )

    def _doi_candidates(
        self, work: Work, open_access: OpenAccess | None, extras: list[Work]
    ) -> list[PdfCandidate]:
        candidates: list[PdfCandidate] = []
        arxiv_ids: list[str] = []
        if open_access is not None:
            for location in open_access.pdf_candidates():
                url = location.url_for_pdf or ""
                candidates.append(PdfCandidate("oa-publisher", url, location.license))
                found = _arxiv_id_in(url) or _arxiv_id_in(location.url)
                if found:
                    arxiv_ids.append(found)
        for extra in extras:
            if extra.source != "unpaywall" and extra.pdf_url:
                candidates.append(PdfCandidate("oa-publisher", extra.pdf_url, extra.license))
        if work.arxiv_id:
            arxiv_ids.append(work.arxiv_id)
        for arxiv_id in arxiv_ids:
            # A DOI that Unpaywall maps to an arXiv preprint may fall back to arXiv.
            candidates.append(PdfCandidate("arxiv", arxiv.pdf_url_for(arxiv_id), work.license))
        seen: set[str] = set()
        unique = []
        for candidate in candidates:
            if candidate.url and candidate.url not in seen:
                seen.add(candidate.url)
                unique.append(candidate)
        return unique
