"""The papers core as one object: every papers use case, from a typed request to a
typed result.

The CLI and the MCP tools build the request, call these methods and render what they
return; none of them talks to an upstream or the store directly. Methods return the
tools' success results and raise :class:`DoigetError` on failure; a batch turns each
ref's failure into its ``{ok: false, ref, error}`` row.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import urlsplit

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.health import SCHEMA_VERSION
from doiget.integrity import notices
from doiget.models import Work
from doiget.net.allowlist import default_hosts
from doiget.net.client import DownloadedPdf
from doiget.net.deadline import call_deadline
from doiget.net.network import Network
from doiget.papers import contracts as c
from doiget.papers.flight import flights_for
from doiget.papers.index import PaperIndex, search_apart
from doiget.papers.provenance import ProvenanceLog
from doiget.papers.resolver import PdfCandidate, Resolution, Resolver
from doiget.papers.store import Entry, Store, integrity_table, work_to_fields
from doiget.papers.tdm import grant_hint, load_source, publishers_for, source_name
from doiget.progress import report as report_progress
from doiget.refs import Ref, arxiv_ref_for, parse_ref
from doiget.runtime import Runtime
from doiget.upstreams.limits import HARD_CODED

if TYPE_CHECKING:
    from doiget.papers.graph import Direction
    from doiget.papers.recheck import CheckProgress
    from doiget.workpool import WorkPool

logger = logging.getLogger("doiget.papers")

BATCH_MAX: Final = 100
LIST_MAX: Final = 100
# How long a local search may wait in its lane: one that would likely not be answered
# by then (the searches ahead of it, then its own) is refused at once with the wait.
LOCAL_SEARCH_SECONDS: Final = 10.0

# Called after each ref of a batch: (done, total, that ref's result row).
BatchProgress = Callable[[int, int, c.BatchRow], Awaitable[None] | None]


def failed_row(ref_text: str, error: DoigetError) -> c.BatchRow:
    """A batch row for a ref that failed; its ``denial_context`` is null when none."""
    denial = error.denial
    return c.BatchRow(
        ok=False,
        ref=ref_text,
        error=c.ErrorBody(
            code=error.code.value,
            message=error.message,
            denial_context=None if denial is None else c.DenialContext(**denial.to_dict()),
        ),
    )


def _not_attempted(log_failure: DoigetError) -> DoigetError:
    return DoigetError(
        ErrorCode.LOG_ERROR,
        "not attempted: the provenance log failed on another ref of this batch "
        f"({log_failure.message})",
    )


def batch_row(fetched: c.Fetched) -> c.BatchRow:
    """A fetch result as a batch row, with the same fields."""
    return c.BatchRow(**{name: getattr(fetched, name) for name in fetched.model_fields_set})


def _license(value: str | None) -> str:
    return value or "unknown"


class Papers:
    """One per process. Holds the store, its index, the provenance log and the network."""

    def __init__(self, runtime: Runtime, network: Network | None = None) -> None:
        self.runtime = runtime
        settings = runtime.settings
        self.network = network or runtime.network()
        self.store = Store(settings.store_root)
        self.index = PaperIndex(self.store)
        self.log = ProvenanceLog(settings.log_path, settings.provenance_key_path)
        self.resolver = Resolver(settings, runtime.profile, self.network)
        self.flights = flights_for(settings.redis_url, settings.data_dir)
        self._index_checked = False

    async def aclose(self) -> None:
        """Close the index and end the provenance session (the network is not ours)."""
        self.index.close()
        self.log.close()
        await self.flights.aclose()

    # -- helpers ----------------------------------------------------------------

    def _fresh_index(self) -> PaperIndex:
        self.store.sweep_if_due()
        if not self._index_checked:
            self.index.ensure_fresh()
            self._index_checked = True
            left_out = [name for name, _ in self.index.unreadable()]
            if left_out:
                logger.warning(
                    "%d metadata file(s) cannot be read and are left out of the library: %s; "
                    "`doiget health` says why and what to do.",
                    len(left_out),
                    ", ".join(left_out[:5]) + (", ..." if len(left_out) > 5 else ""),
                )
        return self.index

    def _log(self, event: str, ref: Ref | None, **fields: Any) -> None:
        self.log.append(
            event,
            ref=ref.canonical if ref else None,
            capability=_capability_of(fields.get("source")),
            **fields,
        )

    async def _log_async(self, event: str, ref: Ref | None, **fields: Any) -> None:
        """Append a row from a worker thread: its lock may wait and its fsync blocks.

        The caller awaits the write, so a row still lands before the act it records.
        """
        await anyio.to_thread.run_sync(functools.partial(self._log, event, ref, **fields))

    async def _log_failure(
        self, event: str, ref: Ref, error: DoigetError, source: str | None
    ) -> None:
        """Record a failed step. A row that cannot be written stops the call (LOG_ERROR):
        nothing that follows may happen unrecorded."""
        result = "denied" if error.denial is not None else "err"
        await self._log_async(event, ref, source=source, result=result, error_code=error.code.value)

    @staticmethod
    def _stopped(ref: Ref, error: DoigetError, contacted: Sequence[str]) -> DoigetError:
        """A LOG_ERROR that says what had already happened when the log failed."""
        asked = ", ".join(dict.fromkeys(contacted)) or "no upstream"
        return DoigetError(
            ErrorCode.LOG_ERROR,
            f"{ref}: {asked} had been contacted and nothing was stored when the provenance "
            f"log failed: {error.message}",
        )

    async def _write_entry(
        self,
        ref: Ref,
        resolution: Resolution,
        doiget_fields: dict[str, Any],
        pdf: Path | None = None,
    ) -> None:
        """Place the PDF (a checked temp file) if any, write the TOML, index the entry.

        Runs in a worker thread (renames and fsyncs block); hold the entry's lock.
        """

        def write() -> None:
            self.store.sweep_if_due()
            new = not self.store.metadata_path(ref).exists()
            target = None if pdf is None else self.store.place_pdf(ref, pdf)
            try:
                self.store.write_metadata(
                    ref, resolution.work, pdf=target, doiget_fields=doiget_fields
                )
            except DoigetError:
                if new and target is not None:  # no TOML points at it: leave no stray PDF
                    target.unlink(missing_ok=True)
                raise
            self._index_entry(ref)

        await anyio.to_thread.run_sync(write)

    def _checked(self, ref: Ref, work: Work) -> Work:
        """``work`` when Crossref was asked about its integrity this time, else what the
        store recorded when it last was (a Crossref outage never hides a retraction)."""
        if work.integrity_checked is not None:
            return work
        try:
            entry = self.store.entry(ref)
        except DoigetError:
            return work
        return entry.work if entry is not None else work

    def _metadata_result(self, resolution: Resolution) -> c.StoredMetadata:
        work = resolution.work
        metadata = work_to_fields(work)
        metadata["retracted"] = work.retracted
        return c.StoredMetadata(
            ok=True,
            ref=resolution.ref.canonical,
            source=resolution.source,
            resolver_profile=resolution.source,
            license=_license(resolution.license),
            oa_url=resolution.oa_url,
            oa_status=resolution.open_access.oa_status if resolution.open_access else None,
            metadata=metadata,
            schema_version=SCHEMA_VERSION,
            **_integrity(self._checked(resolution.ref, work)),
        )

    async def _resolve_logged(self, ref: Ref) -> Resolution:
        _remote(ref)
        try:
            with call_deadline(self.network.timeouts.call_seconds(api=True)):
                resolution = await self.resolver.resolve(ref)
        except DoigetError as error:
            try:
                await self._log_failure("resolve", ref, error, None)
            except DoigetError as log_error:
                raise self._stopped(ref, log_error, ["the metadata sources"]) from error
            raise
        try:
            await self._log_async(
                "resolve",
                ref,
                source=resolution.source,
                result="ok",
                license=resolution.license,
                detail=",".join(resolution.consulted),
            )
        except DoigetError as log_error:
            raise self._stopped(ref, log_error, resolution.consulted) from None
        return resolution

    def _doiget_fields(self, resolution: Resolution, **more: Any) -> dict[str, Any]:
        return {
            "source": resolution.source,
            "license": resolution.license,
            "oa_status": resolution.open_access.oa_status if resolution.open_access else None,
            "oa_url": resolution.oa_url,
            "retracted": resolution.work.retracted or None,
            "integrity": integrity_table(resolution.work),
            **more,
        }

    async def add_alias(self, ref: Ref, kind: str, key: str) -> bool:
        """Keep ``key`` as another name of the stored entry ``ref`` (a provenance row
        first); False, with nothing written, when it is one already."""
        from doiget.papers.store import aliases

        return await self._edit(
            ref,
            f"alias {kind}={key}",
            lambda document: key in aliases(document, kind),
            lambda: self.store.add_alias(ref, kind, key),
        )

    async def drop_alias(self, ref: Ref, kind: str, key: str) -> bool:
        """No longer know the stored entry ``ref`` by ``key`` (a provenance row first);
        False, with nothing written, when it is not one of its names."""
        from doiget.papers.store import aliases

        return await self._edit(
            ref,
            f"alias {kind}={key} dropped",
            lambda document: key not in aliases(document, kind),
            lambda: self.store.remove_alias(ref, kind, key),
        )

    async def set_meta(self, ref: Ref, name: str, value: Any) -> bool:
        """Set ``[doiget] name`` of the stored entry ``ref`` (None removes it; a
        provenance row first); False, with nothing written, when it holds that already."""

        def held(document: dict[str, Any]) -> bool:
            meta = document.get("doiget")
            return isinstance(meta, dict) and meta.get(name) == value

        return await self._edit(
            ref, f"{name}={value!r}"[:300], held, lambda: self.store.set_meta(ref, name, value)
        )

    async def _edit(
        self,
        ref: Ref,
        detail: str,
        done: Callable[[dict[str, Any]], bool],
        write: Callable[[], object],
    ) -> bool:
        """One change to a stored entry under its lock: nothing when ``done`` says the
        entry has it already, else a ``store_write`` row, ``write`` and a re-index."""
        async with self.store.locked_async(ref):
            document = await anyio.to_thread.run_sync(self.store.read_document, ref)
            if document is None:
                raise DoigetError(ErrorCode.NOT_FOUND, f"{ref} is not in the library.")
            if done(document):
                return False
            path = str(self.store.metadata_path(ref))
            await self._log_async("store_write", ref, result="ok", path=path, detail=detail)

            def change() -> None:
                write()
                self._index_entry(ref)

            await anyio.to_thread.run_sync(change)
        return True

    async def log_step(
        self,
        event: str,
        ref: Ref,
        source: str,
        error: DoigetError | None = None,
        detail: str | None = None,
    ) -> None:
        """Record one upstream step of a use case kept in its own module (its failure,
        or its success with ``detail``); LOG_ERROR when the row cannot be written."""
        if error is not None:
            await self._log_failure(event, ref, error, source)
        else:
            await self._log_async(event, ref, source=source, result="ok", detail=detail)

    def record_integrity(self, ref: Ref, work: Work) -> Work:
        """Record ``work``'s integrity in the entry of ``ref`` and re-index it (the entry's
        lock held by the caller); the entry's work as now stored."""
        entry = self.store.record_integrity(ref, work)
        self.index.upsert(entry)
        return entry.work

    async def check_integrity(
        self, request: c.IntegrityCheck, progress: CheckProgress | None = None
    ) -> c.IntegrityReport:
        """Ask Crossref again about stored papers' retractions, concerns and corrections."""
        from doiget.papers.recheck import recheck

        return await recheck(self, request, progress)

    def _index_entry(self, ref: Ref) -> None:
        entry = self.store.entry(ref)
        if entry is not None:
            self.index.upsert(entry)

    # -- use cases --------------------------------------------------------------

    async def resolve(self, request: c.PaperLookup) -> c.Resolved:
        """Authoritative metadata for a ref. Writes a provenance row, nothing else."""
        ref = parse_ref(request.ref)
        return self._metadata_result(await self._resolve_logged(ref))

    async def metadata_only(self, request: c.PaperFetch) -> c.StoredMetadata | c.FetchPlan:
        """Metadata, stored as TOML. Never requests a PDF: the OA URL is only reported.

        With ``dry_run``, the plan instead: no network, no file, no provenance row.
        """
        ref = parse_ref(request.ref)
        if request.dry_run:
            return self._plan(ref, metadata_only=True)
        resolution = await self._resolve_logged(ref)
        try:
            await self._store_metadata(ref, resolution, "metadata_only")
        except DoigetError as error:
            if error.code is ErrorCode.LOG_ERROR:
                raise self._stopped(ref, error, resolution.consulted) from None
            raise
        return self._metadata_result(resolution)

    async def _store_metadata(
        self, ref: Ref, resolution: Resolution, event: str, detail: str | None = None
    ) -> None:
        """Record, then write, the entry's metadata without a PDF (takes its lock)."""
        async with self.store.locked_async(ref):
            await self._log_async(
                event,
                ref,
                source=resolution.source,
                result="ok",
                license=resolution.license,
                path=str(self.store.metadata_path(ref)),
                detail=detail,
            )
            await self._write_entry(ref, resolution, self._doiget_fields(resolution))

    async def fetch(self, request: c.PaperFetch) -> c.Fetched | c.FetchPlan:
        """Resolve, download the first candidate that is a real PDF, store it with its TOML.

        With ``dry_run``, the plan instead: no network, no file, no provenance row.
        """
        ref = parse_ref(request.ref)
        if request.dry_run:
            return self._plan(ref, metadata_only=False)
        return await self._fetch(ref)

    async def _fetch(self, ref: Ref) -> c.Fetched:
        """Fetch ``ref`` holding its flight: a fetch that waited for another one of the
        same ref answers with what that one stored."""
        async with self.flights.hold(ref.safekey) as waited:
            stored = self._stored_fetch(ref) if waited else None
            return stored or await self._fetch_now(ref)

    def _stored_fetch(self, ref: Ref) -> c.Fetched | None:
        """The stored PDF of ``ref`` as a fetch result, when there is one."""
        entry = self.store.entry(ref)
        if entry is None or not entry.has_pdf:
            return None
        fields: dict[str, Any] = entry.document.get("doiget") or {}
        source = str(fields.get("pdf_source") or fields.get("source") or "store")
        size = entry.pdf_size()
        return _fetched(ref, source, entry.pdf_path, fields.get("license"), size, entry.work)

    async def _fetch_now(self, ref: Ref) -> c.Fetched:
        with call_deadline(self.network.timeouts.call_seconds(api=True, pdf=True)):
            resolution = await self._resolve_logged(ref)
            contacted = list(resolution.consulted)
            try:
                return await self._download_first(ref, resolution, contacted)
            except DoigetError as error:
                if error.code is ErrorCode.LOG_ERROR:
                    raise self._stopped(ref, error, contacted) from None
                raise

    async def _download_first(
        self, ref: Ref, resolution: Resolution, contacted: list[str]
    ) -> c.Fetched:
        """Try the Open Access candidates in turn, then the granted TDM sources for the
        ref's DOI prefix; each failure is recorded before the next is asked. With no
        PDF, the metadata is stored (after its row) and the error raised."""
        failures: list[DoigetError] = []
        attempts = [
            (candidate.client, functools.partial(self._try_candidate, ref, resolution, candidate))
            for candidate in resolution.candidates
        ]
        granted = {grant.publisher for grant in self.runtime.profile.grants()}
        ungranted = []
        for publisher in publishers_for(ref):
            if publisher.name in granted:
                attempt = functools.partial(self._try_tdm, ref, resolution, publisher.name)
                attempts.append((source_name(publisher.name), attempt))
            else:
                ungranted.append(publisher)
        for source, attempt in attempts:
            contacted.append(source)
            try:
                return await attempt()
            except DoigetError as error:
                if error.code in (
                    ErrorCode.LOG_ERROR,
                    ErrorCode.STORE_ERROR,
                    ErrorCode.LOCK_TIMEOUT,
                ):
                    raise
                failures.append(error)
                await self._log_failure("fetch", ref, error, source)
        # No PDF: keep what we learned, so the metadata is not lost.
        for lookup, timed_out in resolution.timed_out():
            await self._log_failure("fetch", ref, timed_out, lookup)
        await self._store_metadata(
            ref, resolution, "store_write", "metadata only: no candidate gave a PDF"
        )
        raise self._no_pdf_error(ref, resolution, failures, grant_hint(ungranted))

    def _no_pdf_error(
        self, ref: Ref, resolution: Resolution, failures: list[DoigetError], hint: str
    ) -> DoigetError:
        timed_out = [error for _, error in resolution.timed_out()]
        timed_out += [failure for failure in failures if failure.code is ErrorCode.FETCH_TIMEOUT]
        if timed_out:
            # Time ran out before every place that might hold a copy was asked: that
            # no copy exists is not known, and the answer must not say so.
            said = "; ".join(error.message for error in timed_out)
            return DoigetError(
                ErrorCode.FETCH_TIMEOUT,
                f"time ran out before {ref} could be fetched ({said}); its metadata was "
                "stored. Try again later.",
            )
        if not failures:
            if not self.runtime.settings.email:
                hint += " Set DOIGET_EMAIL so Unpaywall can be asked."
            return DoigetError(
                ErrorCode.NO_OA_AVAILABLE,
                f"no Open Access copy of {ref} is known; its metadata was stored.{hint}",
            )
        denials = [failure for failure in failures if failure.denial is not None]
        tried = "; ".join(failure.message for failure in failures)
        if len(denials) == len(failures) and denials:
            first = denials[0]
            return DoigetError(
                first.code,
                f"every candidate for {ref} was refused ({tried}); its metadata was stored.{hint}",
                first.denial,
            )
        codes = {failure.code for failure in failures}
        if codes == {ErrorCode.RATE_LIMITED}:
            # Every candidate failed the same passing way: say so, as its rows do.
            return DoigetError(
                ErrorCode.RATE_LIMITED,
                f"no candidate for {ref} gave a PDF in time ({tried}); its metadata was stored.",
                retry_after=failures[-1].retry_after,
            )
        return DoigetError(
            ErrorCode.NO_OA_AVAILABLE,
            f"no candidate for {ref} gave a PDF ({tried}); its metadata was stored.{hint}",
        )

    async def _try_candidate(
        self, ref: Ref, resolution: Resolution, candidate: PdfCandidate
    ) -> c.Fetched:
        client = self.network.client(candidate.client)
        async with client.download_pdf(candidate.url, self.store.root) as pdf:
            source = "arxiv" if candidate.client == "arxiv" else "oa-publisher"
            license_text = candidate.license or resolution.license
            return await self._keep(ref, resolution, pdf, source, license_text)

    async def _try_tdm(self, ref: Ref, resolution: Resolution, publisher: str) -> c.Fetched:
        """Fetch through a publisher's TDM API; the grant is the only way to its key."""
        grant = self.runtime.profile.require_tdm(publisher)
        source = load_source(publisher)
        client = self.network.client(publisher)
        async with source.download(ref.value, grant, client, self.store.root) as pdf:
            return await self._keep(
                ref, resolution, pdf, source_name(publisher), resolution.license
            )

    async def _keep(
        self,
        ref: Ref,
        resolution: Resolution,
        pdf: DownloadedPdf,
        source: str,
        license_text: str | None,
    ) -> c.Fetched:
        """Record the download, then store the checked PDF and its TOML under the lock."""
        target = self.store.pdf_path(ref)
        logged = {"source": source, "result": "ok", "license": license_text, "size": pdf.size_bytes}
        await self._log_async("fetch", ref, detail=pdf.url, **logged)
        async with self.store.locked_async(ref):
            await self._log_async("store_write", ref, path=str(target), **logged)
            fields = self._doiget_fields(
                resolution,
                size_bytes=pdf.size_bytes,
                sha256=pdf.sha256,
                pdf_source=source,
                # The host only: a TDM download's query can hold its key.
                pdf_host=urlsplit(pdf.url).hostname,
                license=license_text,
            )
            await self._write_entry(ref, resolution, fields, pdf.path)
        work = self._checked(ref, resolution.work)
        return _fetched(ref, source, target, license_text, pdf.size_bytes, work)

    async def batch(
        self, request: c.BatchFetch, *, progress: BatchProgress | None = None
    ) -> c.BatchFetched | c.BatchPlans:
        """Fetch up to 100 refs concurrently under the rate gate; one result row per ref.
        A ref that cannot be read is its own INVALID_REF row; the others still run.

        With ``dry_run``, every ref's plan instead, after validating them all.
        """
        ref_texts = request.refs
        if request.dry_run:
            plans = [self._plan(ref, metadata_only=False) for ref in self.validate_batch(ref_texts)]
            return c.BatchPlans(
                ok=True, dry_run=True, results=plans, rate_limit_budget=self._budget()
            )
        readings = self.read_batch(ref_texts)
        results: list[c.BatchRow | None] = [
            failed_row(text, reading) if isinstance(reading, DoigetError) else None
            for text, reading in zip(ref_texts, readings, strict=True)
        ]
        refs = {position: ref for position, ref in enumerate(readings) if isinstance(ref, Ref)}
        done = len(ref_texts) - len(refs)
        first_index: dict[str, int] = {}
        log_failure: DoigetError | None = None

        async def run(position: int, ref: Ref) -> None:
            nonlocal done, log_failure
            text = ref_texts[position]
            try:
                row = batch_row(await self._fetch(ref))
            except DoigetError as error:
                row = failed_row(text, error)
                if error.code is ErrorCode.LOG_ERROR:
                    # Nothing more may happen unrecorded: stop the other refs now.
                    log_failure = error
                    tasks.cancel_scope.cancel()
            except Exception as exc:  # one ref's bug must not sink the batch
                logger.exception("unexpected failure fetching %s", ref)
                unexpected = DoigetError(
                    ErrorCode.INTERNAL_ERROR, f"unexpected {type(exc).__name__}"
                )
                row = failed_row(text, unexpected)
            results[position] = row
            done += 1
            await report_progress(progress, done, len(ref_texts), row)

        async with anyio.create_task_group() as tasks:
            for position, ref in refs.items():
                if ref.canonical in first_index:
                    continue
                first_index[ref.canonical] = position
                tasks.start_soon(run, position, ref)
        for position, ref in refs.items():
            if results[position] is None and log_failure is not None:
                results[position] = failed_row(ref_texts[position], _not_attempted(log_failure))
            elif results[position] is None:
                twin = results[first_index[ref.canonical]]
                results[position] = (
                    None if twin is None else twin.model_copy(update={"ref": ref_texts[position]})
                )
        rows = [row for row in results if row is not None]
        succeeded = sum(1 for row in rows if row.ok)
        return c.BatchFetched(
            ok=True,
            results=rows,
            summary=c.BatchSummary(total=len(rows), ok=succeeded, failed=len(rows) - succeeded),
        )

    def read_batch(self, ref_texts: Sequence[str]) -> list[Ref | DoigetError]:
        """Each ref parsed, or the INVALID_REF it is; refuses a batch of no or too many refs."""
        if not ref_texts:
            raise DoigetError(ErrorCode.INVALID_REF, "the batch is empty; give 1-100 refs.")
        if len(ref_texts) > BATCH_MAX:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"{len(ref_texts)} refs given; a batch takes at most {BATCH_MAX}. Split it.",
            )
        readings: list[Ref | DoigetError] = []
        for text in ref_texts:
            try:
                readings.append(parse_ref(text))
            except DoigetError as error:
                readings.append(error)
        return readings

    def validate_batch(self, ref_texts: Sequence[str]) -> list[Ref]:
        """Every ref parsed, or one INVALID_REF naming all the bad ones (for plans)."""
        readings = self.read_batch(ref_texts)
        bad = [
            repr(text)[:80]
            for text, reading in zip(ref_texts, readings, strict=True)
            if isinstance(reading, DoigetError)
        ]
        if bad:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"{len(bad)} ref(s) are not DOIs or arXiv ids: {', '.join(bad[:10])}; "
                "nothing was planned. Fix or remove them and retry.",
            )
        return [reading for reading in readings if isinstance(reading, Ref)]

    @staticmethod
    def _budget() -> c.Budget:
        return c.Budget(
            global_per_sec=HARD_CODED.max_fetches_per_second,
            per_source_min_gap_ms=HARD_CODED.per_source_backoff_ms,
        )

    def _plan(self, ref: Ref, *, metadata_only: bool) -> c.FetchPlan:
        """The dry-run preview of fetching ``ref`` (or storing its metadata only)."""
        _remote(ref)
        metadata_sources: list[str] = self.resolver.metadata_sources(ref)
        pdf_sources: list[c.PdfSource] = []
        if not metadata_only:
            if arxiv_ref_for(ref) is None:
                pdf_sources.append(
                    c.PdfSource(
                        key="oa-publisher", candidate_hosts=list(default_hosts("oa-publisher"))
                    )
                )
            pdf_sources.append(
                c.PdfSource(key="arxiv", candidate_hosts=list(default_hosts("arxiv")))
            )
            granted = {grant.publisher for grant in self.runtime.profile.usable_tdm()}
            pdf_sources += [
                c.PdfSource(key=source_name(u.name), candidate_hosts=list(u.hosts))
                for u in publishers_for(ref)
                if u.name in granted
            ]
        loaded = list(dict.fromkeys([*metadata_sources, *(s.key for s in pdf_sources)]))
        return c.FetchPlan(
            ok=True,
            dry_run=True,
            ref=c.RefShape(**ref.shape()),
            plan=c.Plan(
                metadata_sources=metadata_sources,
                pdf_sources=pdf_sources,
                redirect_allowlists_loaded=loaded,
                candidate_hosts_are_upper_bound=True,
                target_pdf_path=None if metadata_only else str(self.store.pdf_path(ref)),
                target_metadata_path=str(self.store.metadata_path(ref)),
                would_append_provenance=True,
            ),
            rate_limit_budget=self._budget(),
        )

    async def graph(self, request: c.CitationGraph) -> c.Graph:
        """BFS over OpenAlex citations around a DOI (or an arXiv id's DataCite DOI)."""
        from doiget.papers.graph import check_graph_request, expand_citation_graph

        ref = _remote(parse_ref(request.ref))
        depth, direction = request.depth, request.direction
        check_graph_request(self.runtime.profile, depth, direction)
        doi = ref.value if ref.kind == "doi" else f"10.48550/arxiv.{ref.value}"
        result = await expand_citation_graph(
            self.network.client("openalex"),
            doi,
            profile=self.runtime.profile,
            mailto=self.runtime.settings.email,
            depth=depth,
            direction=cast("Direction", direction),
        )
        return c.Graph(**result.to_dict())

    # -- the local library ------------------------------------------------------

    def _entry(self, ref_text: str) -> Entry:
        ref = parse_ref(ref_text)
        entry = self.store.entry(ref)
        if entry is None:
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"{ref} is not in the library; fetch it first (doiget_fetch_paper or "
                "doiget_metadata_only).",
            )
        return entry

    def info(self, request: c.PaperLookup) -> c.StoredPaper:
        """The stored metadata of one entry."""
        entry = self._entry(request.ref)
        return c.StoredPaper(
            ok=True,
            ref=entry.ref.canonical,
            key=entry.key,
            metadata=entry.document,
            metadata_path=str(entry.metadata_path),
            pdf_path=str(entry.pdf_path) if entry.has_pdf else None,
            **_integrity(entry.work),
        )

    def pdf_path(self, request: c.PaperLookup) -> c.PdfLocation:
        """The local path of the stored PDF (never read or sent)."""
        entry = self._entry(request.ref)
        entry.pdf_size()  # NOT_FOUND without a PDF, STORE_ERROR for one never served
        return c.PdfLocation(ok=True, ref=entry.ref.canonical, path=str(entry.pdf_path))

    def search(self, request: c.LocalSearch) -> c.Listing:
        """Search stored title, authors, venue, abstract and year."""
        rows = self._fresh_index().search(request.query, _bounded_limit(request.limit))
        return _search_listing(request.query, rows)

    async def search_in(self, pool: WorkPool, request: c.LocalSearch) -> c.Listing:
        """:meth:`search` as a job of ``pool``; in a worker process when the pool runs
        searches apart (the index is brought up to date here first, once)."""
        within = LOCAL_SEARCH_SECONDS
        if not pool.apart:
            return await pool.run(functools.partial(self.search, request), within=within)
        limit = _bounded_limit(request.limit)
        if not self._index_checked:
            await pool.run(self._fresh_index)
        rows = await pool.run_apart(
            search_apart, self.store.root, request.query, limit, within=within
        )
        return _search_listing(request.query, rows)

    def recent(self, request: c.RecentPapers) -> c.Listing:
        """The most recently fetched entries."""
        rows = self._fresh_index().recent(_bounded_limit(request.limit))
        hits = [c.LocalHit(**row) for row in rows]
        return c.Listing(ok=True, count=len(hits), results=hits)

    def reindex(self) -> c.Reindexed:
        """Rebuild the search index from the TOML files."""
        report = self.index.rebuild()
        self._index_checked = True
        return c.Reindexed(ok=True, indexed=report.indexed, total=report.total)

    def delete(self, request: c.StoredRef) -> c.Removed:
        """Remove an entry's PDF, TOML and index row; record it. CLI only."""
        entry = self._entry(request.ref)
        with self.store.locked(entry.ref):
            self._log("delete", entry.ref, result="ok", path=str(entry.metadata_path))
            removed = self.store.delete(entry.ref)
            self.index.remove(entry.key)
        return c.Removed(ok=True, ref=entry.ref.canonical, removed=[str(p) for p in removed])

    def works(self, ref_texts: Sequence[str]) -> list[Work]:
        """The stored Works of several refs (for exports), in the order given."""
        return [entry.work for entry in self._entries(ref_texts)]

    def _entries(self, ref_texts: Sequence[str]) -> list[Entry]:
        """The stored entries of 1-100 refs, in the order given (NOT_FOUND for one
        that is not stored)."""
        if not ref_texts:
            raise DoigetError(ErrorCode.INVALID_REF, "give at least one ref to export.")
        if len(ref_texts) > LIST_MAX:
            raise DoigetError(
                ErrorCode.INVALID_REF, f"export at most {LIST_MAX} refs at once; split the list."
            )
        return [self._entry(text) for text in ref_texts]

    def bibtex(self, request: c.PaperExport) -> c.BibtexExport:
        """BibTeX for stored entries (keys unique within the document), each under the
        key of the user's own bibliography when one was imported for it."""
        from doiget.cite.bibtex import to_bibtex_many

        entries = self._entries(request.refs)
        bibtex = to_bibtex_many([e.work for e in entries], [e.bib_key for e in entries])
        return c.BibtexExport(ok=True, count=len(entries), bibtex=bibtex)

    def csl(self, request: c.PaperExport) -> c.CslExport:
        """CSL-JSON items for stored entries."""
        from doiget.cite.csl import to_csl_many

        items = to_csl_many(self.works(request.refs))
        return c.CslExport(ok=True, count=len(items), items=items)

    def ris(self, request: c.PaperExport) -> c.RisExport:
        """RIS for stored entries."""
        from doiget.cite.ris import to_ris_many

        works = self.works(request.refs)
        return c.RisExport(ok=True, count=len(works), ris=to_ris_many(works))

    def format_references(self, request: c.FormatReferences) -> c.FormattedReferences:
        """Stored entries in a CSL style (bibliography entries and in-text citations),
        or exported as bibtex, csl-json or ris: one tool for every citation format."""
        from doiget.cite import styles

        if request.style in EXPORT_FORMATS:
            return self._exported(request)
        style = styles.load_style(request.style)
        locale = styles.resolve_locale(request.locale, style)
        entries = self._entries(request.refs)
        from doiget.cite.formatted import render

        rendered = render([entry.work for entry in entries], style, locale, request.format)
        refs = [entry.ref.canonical for entry in entries]
        placed = dict(rendered.entries)
        order = [index for index, _ in rendered.entries]
        order += [index for index in range(len(entries)) if index not in placed]
        references = [
            c.FormattedEntry(
                ref=refs[index], entry=placed.get(index), citation=rendered.citations[index]
            )
            for index in order
        ]
        return c.FormattedReferences(
            ok=True,
            style=style.id,
            locale=locale,
            format=request.format,
            count=len(references),
            references=references,
            citation=rendered.together,
            text="\n".join(ref.entry for ref in references if ref.entry),
        )

    def _exported(self, request: c.FormatReferences) -> c.FormattedReferences:
        export = c.PaperExport(refs=request.refs)
        common = {"ok": True, "style": request.style}
        if request.style == "csl-json":
            items = self.csl(export).items or []
            return c.FormattedReferences(**common, count=len(items), items=items)
        if request.style == "ris":
            ris = self.ris(export)
            return c.FormattedReferences(**common, count=ris.count, text=ris.ris)
        bib = self.bibtex(export)
        return c.FormattedReferences(**common, count=bib.count, text=bib.bibtex)


# The special values of format_references' style: exports rather than CSL styles.
EXPORT_FORMATS: Final = ("bibtex", "csl-json", "ris")


def _fetched(
    ref: Ref, source: str, path: Path, license_text: str | None, size: int, work: Work
) -> c.Fetched:
    """A fetch's success result: the stored PDF of ``ref``, where it came from, and the
    work's integrity notices."""
    return c.Fetched(
        ok=True,
        ref=ref.canonical,
        source=source,
        resolver_profile=source,
        path=str(path),
        license=_license(license_text),
        size_bytes=size,
        schema_version=SCHEMA_VERSION,
        **_integrity(work),
    )


def _remote(ref: Ref) -> Ref:
    """``ref`` when the sources can be asked about it; a local file's ref is refused."""
    if ref.kind == "local":
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"{ref} is a PDF added from a file that no source identified: there is no DOI "
            "or arXiv id to look up or fetch. doiget_info shows what was read from it.",
        )
    return ref


def _integrity(work: Work) -> dict[str, Any]:
    """``{"integrity": [...]}`` for a reply, or nothing when the work has no notice (a
    sparse reply then leaves the field out)."""
    found = notices(work)
    return {"integrity": found} if found else {}


def _capability_of(source: object) -> str:
    """The capability a row's step used: ``tdm`` for a TDM source, else Open Access."""
    return "tdm" if isinstance(source, str) and source.startswith("tdm-") else "oa"


def _search_listing(query: str, rows: list[dict[str, Any]]) -> c.Listing:
    hits = [c.LocalHit(**row) for row in rows]
    return c.Listing(ok=True, query=query, count=len(hits), results=hits)


def _bounded_limit(limit: int) -> int:
    if not 1 <= limit <= LIST_MAX:
        raise DoigetError(ErrorCode.INVALID_REF, f"limit must be 1-{LIST_MAX}; got {limit}.")
    return limit
