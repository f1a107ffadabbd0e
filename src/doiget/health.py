"""Operational sanity: is the store writable, which version and schema run here."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Final

from doiget import __version__
from doiget.config import Settings
from doiget.installed import browser_state, servable

SCHEMA_VERSION: Final = "1.0"


def _writable(directory: Path) -> str | None:
    """None when a file can be created (and removed) in ``directory``, else why not."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".doiget-health-", dir=directory)
        os.close(fd)
        Path(name).unlink()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None


UNREADABLE_NAMES_SHOWN: Final = 20


def unreadable_entries(store_root: Path) -> dict[str, Any]:
    """How many metadata files the library leaves out, and the first few with why.

    Read from the search index, which remembers each file it could not read until
    that file changes: this stats every file (an edit in place leaves the directory's
    mtime alone) but parses only those that changed.
    """
    from doiget.errors import DoigetError
    from doiget.papers.index import PaperIndex
    from doiget.papers.store import Store

    index = PaperIndex(Store(store_root))
    try:
        index.sync()
        left_out = index.unreadable()
    except DoigetError as error:
        return {"problems": [error.message]}
    finally:
        index.close()
    return {
        "unreadable_entries": len(left_out),
        "unreadable_files": [f"{name}: {why}" for name, why in left_out[:UNREADABLE_NAMES_SHOWN]],
    }


def check_health(settings: Settings, *, library: bool = False) -> dict[str, Any]:
    """The doiget_health payload: ``ok`` is true only when every check passed.

    With ``library``, also the metadata files the library cannot read: they are
    counted and named, not a failure (the rest of the library works).
    """
    store_problem = _writable(settings.store_root)
    log_problem = _writable(settings.log_path.parent)
    report: dict[str, Any] = {
        "ok": store_problem is None and log_problem is None,
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "store_root": str(settings.store_root),
        "store_writable": store_problem is None,
        "log_path": str(settings.log_path),
        "log_writable": log_problem is None,
        # What the server serves: a selected toolset whose extra is missing is not.
        "toolsets": list(servable(settings.toolsets, settings)[0]),
        "data_dir": str(settings.data_dir),
        "config_path": str(settings.config_path),
        "config_exists": settings.config_path.is_file(),
        # Without a contact address Unpaywall, the main source of OA links, is skipped.
        "email_set": bool(settings.email),
        "browser_tier": browser_state(settings.browser).describe(),
    }
    problems = [p for p in (store_problem, log_problem) if p is not None]
    report["ok"] = not problems
    if problems:
        report["problems"] = problems
    if library and store_problem is None:
        with_unreadable(report, unreadable_entries(settings.store_root))
    return report


def with_unreadable(report: dict[str, Any], entries: dict[str, Any]) -> None:
    """Add what :func:`unreadable_entries` found to a health ``report``."""
    problems = [*report.get("problems", []), *entries.get("problems", [])]
    report.update({name: value for name, value in entries.items() if name != "problems"})
    report["ok"] = not problems
    if problems:
        report["problems"] = problems
