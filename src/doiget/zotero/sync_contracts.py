"""The contract of doiget_zotero_sync (and ``doiget zotero sync``).

Each Zotero item the sync looked at gets one row (items it did not need to read get
none); ``counts`` sums what happened, ``interrupted`` says the sync stopped before the
end and ``not_done`` how many changed items wait for the next run.
"""

# Annotations are evaluated as the classes are made (see doiget.papers.contracts).
from typing import Annotated, Literal, get_args

from pydantic import Field

from doiget.contract import Request
from doiget.library.projects import DEFAULT_PROJECT_ID
from doiget.papers.contracts import PapersModel
from doiget.verify.contracts import Problem, VerifyModel

# What became of one Zotero item: stored as a new doiget entry (or joined one the
# library held), stored again after it changed in Zotero, deleted in Zotero (the doiget
# entry and its PDF kept), not identified (not stored), failed (tried again next run).
Status = Literal["new", "updated", "deleted", "not_identified", "failed"]
STATUSES: tuple[Status, ...] = get_args(Status)


class ZoteroSyncRequest(Request):
    """What to sync: the whole library, or one collection (``A/B`` names a nested one)."""

    collection: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=500,
            description="Name or path 'A/B'.",
        ),
    ] = None
    project: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="Where PDFs are indexed.",
        ),
    ] = DEFAULT_PROJECT_ID


class SyncRow(VerifyModel):
    """One Zotero item and what the sync did with it (only the fields with a value)."""

    key: str
    title: str | None = None
    status: Status
    ref: str | None = None
    citekey: str | None = None
    retracted: bool | None = None
    pdfs: int | None = None
    problems: list[Problem] | None = None
    reason: str | None = None


class SyncCounts(PapersModel):
    """Items by what happened to them; ``unchanged`` are those synced before and not
    changed since, ``pdfs_added`` the PDFs the store did not hold."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    not_identified: int = 0
    retracted: int = 0
    pdfs_added: int = 0
    failed: int = 0


class ZoteroSyncReport(VerifyModel):
    """What one sync did: the library's versions before and after, the requests made to
    Zotero, the counts and a row per item looked at (a field without a value is left out)."""

    ok: bool
    library: str
    collection: str | None = None
    from_version: int | None = None
    to_version: int
    requests: int
    counts: SyncCounts
    results: list[SyncRow]
    indexed: int = 0
    interrupted: bool = False
    not_done: int = 0
    note: str | None = None
