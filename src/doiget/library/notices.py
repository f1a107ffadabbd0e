"""The integrity notices of the stored papers passages come from, joined at answer time.

A passage's payload names its document (``doc.doc_id``: the store ref of a stored
paper); the notices are read from that paper's metadata when a search answers, not
copied into the payload, so a retraction recorded after indexing (``doiget integrity
--check``) shows on every passage at once. Each document's notices are kept until its
metadata file changes (size or modification time), so a search reads each file at
most once however many of its passages it returns.
"""

from __future__ import annotations

import threading
from pathlib import Path

from doiget.errors import DoigetError
from doiget.integrity import Notice, notices
from doiget.papers.store import Store
from doiget.refs import parse_ref


class PaperNotices:
    """Notices by doc id, for one store; safe to use from several worker threads."""

    def __init__(self, store_root: Path) -> None:
        self.store = Store(store_root)
        self._known: dict[str, tuple[tuple[int, int], list[Notice] | None]] = {}
        self._lock = threading.Lock()

    def of(self, doc_id: str) -> list[Notice] | None:
        """The notices of the stored paper ``doc_id``; None for a clean paper, a file
        indexed from outside the store, or an entry that cannot be read now."""
        try:
            ref = parse_ref(doc_id)
            path = self.store.metadata_path(ref)
            stat = path.stat()
        except (DoigetError, OSError):
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            known = self._known.get(doc_id)
        if known is not None and known[0] == stamp:
            return known[1]
        try:
            entry = self.store.entry(ref)
        except DoigetError:
            return None
        found = notices(entry.work) if entry is not None else None
        with self._lock:
            self._known[doc_id] = (stamp, found)
        return found
