"""The claim core: does each cited work say what the sentence citing it claims?

Every face calls :class:`ClaimChecker`. Each cited work is answered on its own: its
text is found (:mod:`doiget.claims.basis`), then weighed against the claim by the engine
as a job of the work pool (:mod:`doiget.claims.jobs`), never on the event loop. A ref
that is a DOI, an arXiv id or a store key names the work directly; a BibTeX entry, a
free-text reference or a CSL-JSON item is identified by the verifier first.

Bounds: a work is given :data:`WORK_SECONDS` (the works of one claim are looked up side
by side, so a claim takes no longer); its lookups are the verifier's (at most
``verify.service.MAX_REQUESTS``) and four for its abstract, through the process's
network and rate budget, their answers kept on disk. A claim and a work already
answered are answered again from memory, at no request.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio

from doiget.claims import jobs
from doiget.claims.basis import Bases, Fetch, Offload, Source
from doiget.claims.contracts import (
    MAX_EVIDENCE,
    CheckClaims,
    CitedRef,
    ClaimChecks,
    ClaimItem,
    ClaimResult,
    WorkCheck,
    claim_too_long,
)
from doiget.errors import DoigetError, ErrorCode
from doiget.papers.store import STORE_KEY, Store
from doiget.progress import in_order
from doiget.refs import Ref, parse_ref

if TYPE_CHECKING:
    from doiget.claims.evidence import Assessment
    from doiget.runtime import Runtime
    from doiget.verify.service import Verifier
    from doiget.workpool import WorkPool

T = TypeVar("T")

logger = logging.getLogger("doiget.claims")

WORK_SECONDS: Final = 90.0
# Claims in flight: each waits mostly on upstreams, whose rate budget bounds them anyway.
CONCURRENT: Final = 4
KEPT_RESULTS: Final = 512
KEPT_SOURCES: Final = 128
FAULT: Final = (
    "doiget failed on this claim (the fault is in its log); the other claims are "
    "answered: check this one again alone, or with its source's text"
)

Progress = Callable[[int, int, ClaimResult], Awaitable[None] | None]
Weigh = Callable[[str, str, Path | None, str | None], "Assessment"]


class _Kept(OrderedDict[Any, T]):
    """The most recently used few answers."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size

    def find(self, key: Any) -> T | None:
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def keep(self, key: Any, value: T) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self._size:
            self.popitem(last=False)


class _Flights:
    """A lock per key while anyone holds or waits for it (none kept after)."""

    def __init__(self) -> None:
        self._locks: dict[Any, tuple[anyio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: Any) -> AsyncIterator[None]:
        lock, holders = self._locks.get(key, (anyio.Lock(), 0))
        self._locks[key] = (lock, holders + 1)
        try:
            async with lock:
                yield
        finally:
            lock, holders = self._locks[key]
            if holders == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, holders - 1)


class ClaimChecker:
    """Checks claims against the works they cite; one per process (its answers kept)."""

    def __init__(
        self,
        store: Store,
        verifier: Verifier,
        pool: WorkPool,
        fetch: Fetch | None = None,
        *,
        offload: Offload | None = None,
        weigh: Weigh = jobs.weigh,
    ) -> None:
        self._pool = pool
        self._weigh = weigh
        self._offload: Offload = offload or pool.run
        self._bases = Bases(store, verifier, fetch)
        self._results: _Kept[WorkCheck] = _Kept(KEPT_RESULTS)
        self._sources: _Kept[Source] = _Kept(KEPT_SOURCES)
        self._flights = _Flights()

    @classmethod
    def of(
        cls, runtime: Runtime, *, verifier: Verifier, offload: Offload | None = None
    ) -> ClaimChecker:
        """The claim checker of a process: its store, the papers lane of its work pool,
        and ``verifier``'s network and kept answers; small work of a call (reading a
        reference) through ``offload``, else the lane."""
        return cls(
            Store(runtime.settings.store_root),
            verifier,
            runtime.pool("papers"),
            _fetching(runtime),
            offload=offload,
        )

    async def aclose(self) -> None:
        """Nothing of its own to release: the papers core and the verifier are shared."""

    async def check(self, request: CheckClaims, progress: Progress | None = None) -> ClaimChecks:
        """One result per claim, in input order; ``progress(done, total, result)`` after
        each. A claim that fails carries its coded error; the others are answered."""

        async def one(item: ClaimItem) -> ClaimResult:
            try:
                return await self._claim(item, request.fetch)
            except DoigetError as error:
                return ClaimResult(claim=item.claim, error=error.to_dict())
            except Exception:  # a fault on one odd claim never costs the others theirs
                logger.exception("the check of a claim failed")
                fault = DoigetError(ErrorCode.INTERNAL_ERROR, FAULT)
                return ClaimResult(claim=item.claim, error=fault.to_dict())

        results = await in_order(request.items, one, at_once=CONCURRENT, progress=progress)
        return ClaimChecks(ok=True, results=results)

    async def _claim(self, item: ClaimItem, fetch: bool) -> ClaimResult:
        refs = item.ref if isinstance(item.ref, list) else [item.ref]
        if item.text is not None:
            if len(refs) > 1:
                raise DoigetError(
                    ErrorCode.INVALID_REF,
                    "inline text is one work's: give it with one ref (or none), or give "
                    "several refs without text.",
                )
            work = await self.check_work(item.claim, refs[0], item.text, fetch=fetch)
            return ClaimResult(claim=item.claim, works=[work])
        if item.ref is None:
            raise _no_source()
        works: list[WorkCheck | None] = [None] * len(refs)
        failures: list[DoigetError] = []

        async def one(index: int) -> None:
            try:
                works[index] = await self.check_work(item.claim, refs[index], None, fetch=fetch)
            except DoigetError as error:
                failures.append(error)

        async with anyio.create_task_group() as group:
            for index in range(len(refs)):
                group.start_soon(one, index)
        if failures:
            raise failures[0]
        return ClaimResult(claim=item.claim, works=[work for work in works if work is not None])

    async def check_work(
        self,
        claim: str,
        reference: CitedRef | None,
        text: str | None,
        *,
        fetch: bool,
        key: str | None = None,
    ) -> WorkCheck:
        """What one cited work (``reference``, or ``text`` the caller holds) says about
        ``claim``; ``key`` is the citation key it is answered under. INVALID_REF for a
        claim longer than a request may hold (a manuscript's sentence is not one)."""
        too_long = claim_too_long(claim)
        if too_long is not None:
            raise DoigetError(ErrorCode.INVALID_REF, f"{too_long}.")
        work = _identity(reference, text)
        kept = self._results.find((claim, work, fetch))
        if kept is None:
            with anyio.move_on_after(WORK_SECONDS):
                kept = await self._answer(claim, reference, text, work, fetch)
            if kept is None:
                note = (
                    f"time ran out ({WORK_SECONDS:.0f} s) before the work's text was found "
                    "and weighed; try again later"
                )
                return WorkCheck(ref=_name_of(reference), key=key, basis="unavailable",
                                 basis_note=note, addressed="unavailable")  # fmt: skip
            if kept.basis != "unavailable":
                self._results.keep((claim, work, fetch), kept)
        # A copy: what is kept is never changed by a caller.
        return kept.model_copy(update={} if key is None else {"key": key}, deep=True)

    async def _answer(
        self, claim: str, reference: CitedRef | None, text: str | None, work: Any, fetch: bool
    ) -> WorkCheck:
        source = await self._source(reference, text, work, fetch)
        try:
            return await self._weighed(claim, source)
        except DoigetError as error:
            if error.code is not ErrorCode.NOT_FOUND or source.pdf is None:
                raise
        # The stored PDF has no text to read (a scan): the abstract instead.
        return await self._weighed(claim, await self._bases.unreadable(source))

    async def _weighed(self, claim: str, source: Source) -> WorkCheck:
        if source.basis == "unavailable":
            return _answered(source, None)
        return _answered(source, await self._job(claim, source))

    async def _source(
        self, reference: CitedRef | None, text: str | None, work: Any, fetch: bool
    ) -> Source:
        if text is not None:
            return Source("inline", _name_of(reference), text=text)
        if reference is None:
            raise _no_source()
        if isinstance(reference, str) and _names_work(reference):
            return await self._kept(
                (work, fetch), lambda: self._bases.of_name(reference, fetch=fetch)
            )

        def of_ref(ref: Ref, pmid: str | None) -> Awaitable[Source]:
            # The work a reference cites shares what is kept of it under its ref.
            return self._kept(
                (("ref", ref.canonical), fetch),
                lambda: self._bases.of_ref(ref, fetch=fetch, pmid=pmid),
            )

        return await self._kept(
            (work, fetch),
            lambda: self._bases.of_reference(reference, offload=self._offload, of_ref=of_ref),
        )

    async def _kept(self, key: Any, find: Callable[[], Awaitable[Source]]) -> Source:
        """The source kept under ``key``, else ``find()``'s (kept unless unavailable).
        One lookup of a key at a time: a manuscript citing a paper on every page asks
        for it once, the other checks waiting for what that lookup kept."""
        async with self._flights.hold(key):
            kept = self._sources.find(key)
            if kept is not None:
                return kept
            source = await find()
            if source.basis != "unavailable":
                self._sources.keep(key, source)
            return source

    async def _job(self, claim: str, source: Source) -> Assessment:
        """The engine's weighing, in the pool: in a worker process where it runs
        searches apart (encoding holds the interpreter lock)."""
        args = (claim, source.ref or "the source", source.pdf, source.text)
        if self._pool.apart:
            await self._pool.prepare_apart(jobs.warm)
            return await self._pool.run_apart(self._weigh, *args)
        return await self._pool.run(functools.partial(self._weigh, *args))


def _fetching(runtime: Runtime) -> Fetch:
    """A fetch of a work's Open Access PDF into the store, as ``doiget fetch`` does it:
    by a papers core of its own, closed once the fetch ends (fetches are few)."""

    async def fetch(ref: Ref) -> object:
        from doiget.papers.contracts import PaperFetch
        from doiget.papers.service import Papers

        papers = Papers(runtime)
        try:
            return await papers.fetch(PaperFetch(ref=ref.canonical))
        finally:
            await papers.aclose()

    return fetch


def _no_source() -> DoigetError:
    return DoigetError(
        ErrorCode.INVALID_REF,
        "give each claim a ref (DOI, arXiv id, stored key, BibTeX or free text; a list "
        "for a citation of several works) or the source's text.",
    )


def _names_work(reference: str) -> bool:
    """Whether ``reference`` is a DOI, an arXiv id or a store key (not a reference text)."""
    text = reference.strip()
    if STORE_KEY.fullmatch(text):
        return True
    try:
        parse_ref(text)
    except DoigetError:
        return False
    return True


def _name_of(reference: CitedRef | None) -> str | None:
    """The ref inline text is said to be of, when it names one."""
    if isinstance(reference, str) and _names_work(reference):
        text = reference.strip()
        return text if STORE_KEY.fullmatch(text) else parse_ref(text).canonical
    return None


def _identity(reference: CitedRef | None, text: str | None) -> Any:
    """What makes two requests ask about the same work's same text."""
    if text is not None:
        return ("inline", hashlib.sha256(text.encode()).hexdigest(), _name_of(reference))
    if isinstance(reference, str) and _names_work(reference):
        return ("ref", _name_of(reference))
    if isinstance(reference, Mapping):
        return ("reference", json.dumps(reference, sort_keys=True, default=str))
    return ("reference", (reference or "").strip())


def _answered(source: Source, assessed: Assessment | None) -> WorkCheck:
    if assessed is None:
        return WorkCheck(
            ref=source.ref, basis=source.basis, basis_note=source.note,
            addressed="unavailable", verification=source.verification,
        )  # fmt: skip
    return WorkCheck(
        ref=source.ref,
        basis=source.basis,
        basis_note=source.note,
        addressed=assessed.addressed,
        confidence=assessed.confidence,
        evidence=list(assessed.evidence)[:MAX_EVIDENCE],
        cues=list(assessed.cues),
        verification=source.verification,
    )
