"""``doiget integrity --check``: ask Crossref again about every stored paper's integrity.

A retraction or an expression of concern often comes years after a paper was stored.
Each stored paper with a Crossref DOI is looked up again through the normal Crossref
client (its rate gate, retries and allowlist), a few at a time; what Crossref lists
now joins what the entry recorded (a notice is never dropped), with the time of the
check, and the report names the notices that are new. Each lookup is a provenance row
(``integrity_check``) written before the entry changes; a row that cannot be written
stops the run, as for a fetch. Nothing but ``[doiget.integrity]`` (and ``retracted``)
changes in an entry: its bibliographic fields, and when it was fetched, stay as they are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import anyio

from doiget.errors import DoigetError, ErrorCode
from doiget.integrity import Notice, notices
from doiget.papers import contracts as c
from doiget.papers.store import Entry, utc_now
from doiget.progress import report
from doiget.refs import parse_ref
from doiget.sources import crossref

if TYPE_CHECKING:
    from doiget.papers.service import Papers

# Lookups in flight: the Crossref gate paces them; a few keep it busy.
CONCURRENT: Final = 4
# DataCite's arXiv DOIs: Crossref holds no record (and no notice) for them.
_ARXIV_DOI_PREFIX: Final = "10.48550/"

# Called after each entry: (done, total, its row).
CheckProgress = Callable[[int, int, c.IntegrityRow], Awaitable[None] | None]


def _entries(papers: Papers, refs: Sequence[str]) -> list[Entry]:
    if not refs:
        return list(papers.store.entries())
    found = []
    for text in refs:
        entry = papers.store.entry(parse_ref(text))
        if entry is None:
            raise DoigetError(
                ErrorCode.NOT_FOUND, f"{text} is not in the library; check stored papers only."
            )
        found.append(entry)
    return found


def _key(notice: Notice) -> tuple[str | None, str | None, str]:
    return notice.notice_doi, notice.notice_of, notice.kind


async def _check(papers: Papers, entry: Entry) -> c.IntegrityRow:
    ref = entry.ref.canonical
    before = entry.work
    doi = before.doi
    if not doi or doi.lower().startswith(_ARXIV_DOI_PREFIX):
        note = "no Crossref DOI: Crossref records no notices for it"
        return c.IntegrityRow(ref=ref, status="not_checked", note=note)
    try:
        record = await crossref.get_work(
            papers.network.client("crossref"), doi, papers.runtime.settings.email
        )
    except DoigetError as error:
        await papers.log_step("integrity_check", entry.ref, "crossref", error)
        if error.code is ErrorCode.NOT_FOUND:
            note = f"Crossref has no record of {doi}"
            return c.IntegrityRow(ref=ref, status="not_checked", note=note)
        return c.IntegrityRow(
            ref=ref,
            status="failed",
            error=c.ErrorBody(code=error.code.value, message=error.message),
        )
    checked = replace(record, integrity_checked=utc_now())
    kinds = ",".join(notice.kind for notice in checked.integrity) or "none"
    await papers.log_step("integrity_check", entry.ref, "crossref", detail=f"notices: {kinds}")
    async with papers.store.locked_async(entry.ref):
        after = await anyio.to_thread.run_sync(papers.record_integrity, entry.ref, checked)
    known = {_key(notice) for notice in notices(before) or []}
    new = [notice for notice in notices(after) or [] if _key(notice) not in known]
    row = c.IntegrityRow(ref=ref, status="new_notices" if new else "unchanged")
    if new:
        row.new = new
    if found := notices(after):
        row.integrity = found
    return row


async def recheck(
    papers: Papers, request: c.IntegrityCheck, progress: CheckProgress | None = None
) -> c.IntegrityReport:
    """Every named (or every stored) paper checked again; one row each, in key order.

    Without ``request.check``, the notices the entries record (those with any), and
    no request is sent.
    """
    entries = _entries(papers, request.refs)
    if not request.check:
        return _recorded(entries)
    rows: list[c.IntegrityRow | None] = [None] * len(entries)
    limiter = anyio.CapacityLimiter(CONCURRENT)
    done = 0

    log_failure: DoigetError | None = None

    async def run(position: int, entry: Entry) -> None:
        nonlocal done, log_failure
        async with limiter:
            try:
                row = await _check(papers, entry)
            except DoigetError as error:
                if error.code is ErrorCode.LOG_ERROR:
                    # Nothing more may happen unrecorded: stop the other lookups now.
                    log_failure = error
                    group.cancel_scope.cancel()
                    return
                error_body = c.ErrorBody(code=error.code.value, message=error.message)
                row = c.IntegrityRow(ref=entry.ref.canonical, status="failed", error=error_body)
        rows[position] = row
        done += 1
        await report(progress, done, len(entries), row)

    async with anyio.create_task_group() as group:
        for position, entry in enumerate(entries):
            group.start_soon(run, position, entry)
    if log_failure is not None:
        raise log_failure
    results = [row for row in rows if row is not None]
    count = {status: sum(r.status == status for r in results) for status in _STATUSES}
    return c.IntegrityReport(
        ok=True,
        checked=count["new_notices"] + count["unchanged"],
        changed=count["new_notices"],
        not_checked=count["not_checked"],
        failed=count["failed"],
        results=results,
    )


def _recorded(entries: list[Entry]) -> c.IntegrityReport:
    rows = [
        c.IntegrityRow(ref=entry.ref.canonical, status="recorded", integrity=found)
        for entry in entries
        if (found := notices(entry.work))
    ]
    return c.IntegrityReport(ok=True, checked=0, changed=0, not_checked=0, failed=0, results=rows)


_STATUSES: Final = ("new_notices", "unchanged", "not_checked", "failed")
