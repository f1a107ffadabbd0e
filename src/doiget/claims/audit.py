"""Auditing a manuscript: every citation, in reading order, checked against what it cites.

Each distinct cited key is verified once for the whole manuscript (is the work real,
cited with the right details, retracted?); each citation's sentence is then checked
against each work it cites (does the work say it?) and the quotations in the sentence
are looked for word for word in the stored work. An audit cut short (Ctrl-C, the
caller's cancellation) keeps what it checked: :meth:`Audit.report` builds the report
from what is done at any moment, naming the citations left unchecked and why. A check
one source could not answer is reported on its citation; the others go on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import anyio.lowlevel

from doiget.claims.audit_contracts import (
    STATUSES,
    AuditReport,
    CitationCheck,
    KeyCheck,
    QuoteResult,
    Status,
    Summary,
    Where,
)
from doiget.claims.contracts import WorkCheck
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript
from doiget.errors import DoigetError, ErrorCode
from doiget.progress import report
from doiget.reading.contracts import CheckQuote, QuoteCheck
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import Row, Verification
from doiget.verify.lookup import Offload, here

if TYPE_CHECKING:
    from doiget.runtime import Runtime
    from doiget.verify.service import Verifier

# Citations checked at once: the checker's own budget paces the upstream requests.
CONCURRENT: Final = 4
# Distinct works one audit verifies and checks: each costs up to a dozen lookups of the
# sources' shared rate budget, so a draft citing more is refused before any is made.
MAX_CITED_WORKS: Final = 1_000
NOT_STARTED: Final = "not checked: the audit stopped before reaching it"
INTERNAL: Final = (
    "claim not checked: doiget failed on this work (the fault is in its log); check the "
    "sentence alone with doiget_check_claims"
)

logger = logging.getLogger("doiget.claims")

Progress = Callable[[int, int, str], Awaitable[None] | None]
Reference = str | dict[str, Any]


class WorkChecker(Protocol):
    """What one cited work says about a claim (:class:`doiget.claims.service.ClaimChecker`)."""

    async def check_work(
        self,
        claim: str,
        reference: Reference | None,
        text: str | None,
        *,
        fetch: bool,
        key: str | None,
    ) -> WorkCheck: ...


class ReferenceVerifier(Protocol):
    """The verdict on cited works (:class:`doiget.verify.service.Verifier`)."""

    async def verify_many(
        self,
        cited: Sequence[CitedWork],
        progress: Callable[[int, int, Row], Awaitable[None] | None] | None = None,
    ) -> Verification: ...


class QuoteFinder(Protocol):
    """A quotation looked for in a stored paper (:class:`doiget.reading.service.Reader`)."""

    async def check(self, request: CheckQuote) -> QuoteCheck: ...


class Audit:
    """One manuscript's audit; :meth:`run` checks it, :meth:`report` says what is done."""

    def __init__(
        self,
        manuscript: Manuscript,
        *,
        checker: WorkChecker,
        verifier: ReferenceVerifier,
        quotes: QuoteFinder,
        fetch: bool,
        offload: Offload = here,
    ) -> None:
        self.manuscript = manuscript
        self._checker = checker
        self._verifier = verifier
        self._quotes = quotes
        self._fetch = fetch
        self._offload = offload
        self._keys = _distinct_keys(manuscript.citations)
        if len(self._keys) > MAX_CITED_WORKS:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"{manuscript.name} cites {len(self._keys):,} distinct works; an audit checks "
                f"at most {MAX_CITED_WORKS:,}, each costing up to a dozen lookups: audit the "
                "draft in parts (a chapter at a time).",
            )
        self._rows: dict[str, Row] = {}
        self._unverified: dict[str, str] = {}  # key -> why the verifier gave no verdict
        self._done: dict[int, CitationCheck] = {}
        self._works: dict[tuple[str, str], WorkCheck] = {}

    async def run(self, progress: Progress | None = None) -> AuditReport:
        """Check every cited work, then every citation; ``progress(done, total, message)``
        after each (``total`` counts both)."""
        citations = self.manuscript.citations
        total = len(self._keys) + len(citations)

        async def verified(done: int, _: int, row: Row) -> None:
            await report(progress, done, total, f"{row.key or 'reference'}: {row.verdict}")

        await self._verify(verified)
        first = len(self._keys)
        pending = iter(range(len(citations)))

        async def checking() -> None:  # one of CONCURRENT, each taking the next citation
            for index in pending:
                checked = await self._citation(index, citations[index])
                self._done[index] = checked
                said = f"{checked.place.shown()}: {checked.status}"
                await report(progress, first + len(self._done), total, said)
                # A citation answered without a lookup (a key with no entry) never
                # waits: the loop serves its other callers between two of them.
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENT):
                group.start_soon(checking)
        # Thousands of citations take a second to gather: never on the event loop.
        return await self._offload(self.report)

    def report(self, stopped: str | None = None) -> AuditReport:
        """The report of what is checked so far; ``stopped`` says why the audit ended
        before the rest (each citation left is reported with it)."""
        why = f"not checked: {stopped}" if stopped else NOT_STARTED
        citations = [
            self._done.get(index) or self._unchecked(index, citation, why)
            for index, citation in enumerate(self.manuscript.citations)
        ]
        works = [self._rows[key] for key in self._keys if key in self._rows]
        return AuditReport(
            ok=True,
            name=self.manuscript.name,
            format=self.manuscript.format,
            partial=not all(citation.checked for citation in citations),
            stopped=stopped,
            summary=_summary(citations, self._keys, works, self.manuscript.bibliography),
            citations=citations,
            works=works,
            notes=list(self.manuscript.notes),
        )

    # -- the cited works ----------------------------------------------------------

    async def _verify(self, progress: Callable[[int, int, Row], Awaitable[None]]) -> None:
        """A verdict for each distinct key the bibliography describes, each verified once;
        each kept as it comes, so an audit cut short keeps the verdicts it has."""
        from doiget.verify.inputs import read_items

        bibliography = self.manuscript.bibliography
        keys = [key for key in self._keys if _missing(bibliography.get(key)) is None]
        if not keys:
            return
        references = [bibliography[key].reference or "" for key in keys]

        def read() -> list[CitedWork]:  # each under the key the draft cites it by
            return [
                replace(work, key=key)
                for work, key in zip(read_items(references), keys, strict=True)
            ]

        async def kept(done: int, total: int, row: Row) -> None:
            if row.key is not None:
                self._rows[row.key] = row
            await progress(done, total, row)

        cited = await self._offload(read)
        try:
            await self._verifier.verify_many(cited, kept)
        except DoigetError as error:
            for key in keys:
                self._unverified[key] = f"not verified: {error.message}"

    # -- one citation -------------------------------------------------------------

    async def _citation(self, index: int, citation: Citation) -> CitationCheck:
        keys: list[KeyCheck] = []
        unchecked: list[str] = []
        for key in dict.fromkeys(citation.keys):
            check, ran = await self._key(citation, key)
            keys.append(check)
            if not ran:
                unchecked.append(key)
        return CitationCheck(
            index=index + 1,
            place=_place(citation),
            sentence=citation.sentence,
            status=_status(keys),
            checked=not unchecked,
            keys=keys,
            note=f"not checked against {', '.join(unchecked)}" if unchecked else None,
        )

    async def _key(self, citation: Citation, key: str) -> tuple[KeyCheck, bool]:
        """What ``key`` gives ``citation``, and whether its claim check ran (a key
        without a reference has none to run)."""
        cited = self.manuscript.bibliography.get(key)
        if cited is None or cited.reference is None:
            return self._verdict(key), True
        try:
            work = await self._work(citation.sentence, key, cited.reference)
        except DoigetError as error:
            return self._verdict(key, f"claim not checked: {error.message}"), False
        except Exception:  # a fault on one odd work never costs the others their checks
            logger.exception("the claim check of %s failed", key)
            return self._verdict(key, INTERNAL), False
        quotes = [await self._quote(quote, work, key) for quote in citation.quotes]
        return self._verdict(key, _unavailable(work), work=work, quotes=quotes), True

    def _verdict(self, key: str, note: str | None = None, **checked: Any) -> KeyCheck:
        """``key``'s verdict, problems and integrity notices, with what else is given."""
        row = self._rows.get(key)
        verdict = (
            {"verdict": row.verdict, "problems": row.problems, "integrity": row.integrity}
            if row is not None
            else {}
        )
        missing = _missing(self.manuscript.bibliography.get(key))
        return KeyCheck(
            key=key,
            missing=missing,
            note=_joined(self._unverified.get(key), note),
            **verdict,
            **checked,
        )

    async def _work(self, sentence: str, key: str, reference: Reference) -> WorkCheck:
        """The claim checked against the work ``key`` names; a sentence citing the same
        key twice is checked once."""
        known = self._works.get((sentence, key))
        if known is None:
            found = await self._checker.check_work(
                sentence, reference, None, fetch=self._fetch, key=key
            )
            # The verification row is the report's, once per key.
            fields = found.model_dump(exclude={"verification"}, exclude_unset=True)
            known = WorkCheck.model_validate({**fields, "key": key})
            self._works[(sentence, key)] = known
        return known

    async def _quote(self, quote: str, work: WorkCheck, key: str) -> QuoteResult:
        ref = self._stored_ref(work, key)
        if ref is None:
            return QuoteResult(
                quote=quote,
                note="not checked: the cited work was not identified by a DOI or "
                "arXiv id, so it cannot be in the library",
            )
        try:
            found = await self._quotes.check(CheckQuote(quote=quote, ref=ref))
        except DoigetError as error:
            return QuoteResult(quote=quote, note=f"not checked: {error.message}")
        return QuoteResult(
            quote=quote,
            found=found.found,
            similarity=found.similarity,
            passage=None if found.found else found.passage,
            page=found.page,
            section=found.section.title if found.section is not None else None,
        )

    def _stored_ref(self, work: WorkCheck, key: str) -> str | None:
        """The DOI or arXiv id the work may be stored under: the matched record's (none
        when the verifier matched none), else the one the claim check resolved."""
        row = self._rows.get(key)
        if row is not None:
            return row.match.ref if row.match is not None else None
        return work.ref if work.ref and work.ref != key else None

    def _unchecked(self, index: int, citation: Citation, why: str) -> CitationCheck:
        keys = [self._verdict(key, why) for key in dict.fromkeys(citation.keys)]
        return CitationCheck(
            index=index + 1,
            place=_place(citation),
            sentence=citation.sentence,
            status=_status(keys),
            checked=False,
            keys=keys,
            note=why,
        )


async def audit(
    manuscript: Manuscript,
    *,
    checker: WorkChecker,
    verifier: ReferenceVerifier,
    quotes: QuoteFinder,
    fetch: bool,
    progress: Progress | None = None,
    offload: Offload = here,
) -> AuditReport:
    """Every citation of ``manuscript`` checked (see the module docstring)."""
    run = Audit(
        manuscript, checker=checker, verifier=verifier, quotes=quotes, fetch=fetch, offload=offload
    )
    return await run.run(progress)


def claim_checker(runtime: Runtime, verifier: Verifier, offload: Offload) -> WorkChecker:
    """The claim checker of a process, sharing its verifier and work pool."""
    from doiget.claims.service import ClaimChecker

    checker: WorkChecker = ClaimChecker.of(runtime, verifier=verifier, offload=offload)
    return checker


# -- helpers ----------------------------------------------------------------------


def _distinct_keys(citations: Sequence[Citation]) -> list[str]:
    """Every cited key once, in the order the manuscript first cites it."""
    return list(dict.fromkeys(key for citation in citations for key in citation.keys))


def _missing(cited: Cited | None) -> str | None:
    """Why a key has no reference to verify, or None when it has one."""
    if cited is None:
        return "not in the bibliography: add its entry, or correct the key"
    if cited.reference is None:
        return cited.missing or "its bibliography entry could not be read"
    return None


def _joined(*notes: str | None) -> str | None:
    kept = [note for note in notes if note]
    return "; ".join(kept) if kept else None


def _unavailable(work: WorkCheck) -> str | None:
    if work.addressed != "unavailable":
        return None
    return f"no text to weigh the claim against: {work.basis_note or 'none found'}"


def _place(citation: Citation) -> Where:
    place = citation.place
    return Where(file=place.file, line=place.line, page=place.page)


def _retracted(check: KeyCheck) -> bool:
    if any(problem.kind == "retracted" for problem in check.problems):
        return True
    return any(
        notice.kind in ("retraction", "withdrawal") and notice.notice_of is None
        for notice in check.integrity or []
    )


def _key_statuses(check: KeyCheck) -> set[Status]:
    """Every status one cited work gives its citation."""
    found: set[Status] = set()
    work = check.work
    if check.verdict == "not_found":
        found.add("not_real")
    elif check.verdict == "miscited":
        found.add("miscited")
    if check.missing is not None:
        found.add("missing")
    if _retracted(check):
        found.add("retracted")
    if any(quote.found is False for quote in check.quotes):
        found.add("quote_differs")
    unverified = check.verdict is None and check.missing is None
    if (
        work is None
        or work.addressed == "unavailable"
        or check.verdict == "uncertain"
        or unverified
    ):
        found.add("unchecked")
    elif work.addressed == "not_addressed":
        found.add("not_addressed")
    elif work.addressed == "partly":
        found.add("partly")
    if work is not None and work.cues:
        found.add("cues")
    return found or {"ok"}


def _status(keys: Sequence[KeyCheck]) -> Status:
    """A citation's worst status over the works it cites."""
    found = set().union(*(_key_statuses(check) for check in keys)) if keys else {"unchecked"}
    return next(status for status in STATUSES if status in found)


def _summary(
    citations: Sequence[CitationCheck],
    keys: Sequence[str],
    rows: Sequence[Row],
    bibliography: dict[str, Cited],
) -> Summary:
    statuses = [set().union(*(_key_statuses(k) for k in c.keys)) for c in citations]
    distinct = {check.key: check for citation in citations for check in citation.keys}

    def citing(status: Status) -> int:
        return sum(status in found for found in statuses)

    return Summary(
        citations=len(citations),
        cited_works=len(keys),
        not_real=sum(row.verdict == "not_found" for row in rows),
        missing=sum(_missing(bibliography.get(key)) is not None for key in keys),
        miscited=sum(row.verdict == "miscited" for row in rows),
        retracted=sum(_retracted(check) for check in distinct.values()),
        not_addressed=citing("not_addressed"),
        partly=citing("partly"),
        with_cues=citing("cues"),
        quotes_not_found=sum(
            quote.found is False for c in citations for k in c.keys for quote in k.quotes
        ),
        # Shown as not checked, or cut short: a citation whose worse problem is shown
        # instead (a key missing from the bibliography) is counted under that problem.
        unchecked=sum(c.status == "unchecked" or not c.checked for c in citations),
    )
