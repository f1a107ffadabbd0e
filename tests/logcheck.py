"""Verify the provenance log of a test's doiget environment (its key included)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from doiget.config import load_settings
from doiget.papers.provenance import VerifyReport, verify


def verify_env(env: Mapping[str, str]) -> VerifyReport:
    """The verification of the log that a doiget run with ``env`` writes."""
    settings = load_settings(env)
    return verify(settings.log_path, settings.provenance_key_path)


def key_for(log: Path) -> Path:
    """Where a unit test keeps the key of the log at ``log`` (outside the log's folder)."""
    return log.parent.with_name(f"{log.parent.name}-keys") / "provenance.key"
