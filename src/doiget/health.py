"""Operational sanity: is the store writable, which version and schema run here."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Final

from doiget import __version__
from doiget.config import Settings
from doiget.installed import browser_state

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


def check_health(settings: Settings) -> dict[str, Any]:
    """The doiget_health payload: ``ok`` is true only when every check passed."""
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
        "toolsets": list(settings.toolsets),
        "data_dir": str(settings.data_dir),
        "config_path": str(settings.config_path),
        "config_exists": settings.config_path.is_file(),
        # Without a contact address Unpaywall, the main source of OA links, is skipped.
        "email_set": bool(settings.email),
        "browser_tier": browser_state(settings.browser).describe(),
    }
    problems = [p for p in (store_problem, log_problem) if p is not None]
    if problems:
        report["problems"] = problems
    return report
