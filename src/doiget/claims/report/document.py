"""The audit as JSON: the ``doiget_audit_manuscript`` tool's document."""

from __future__ import annotations

import json

from doiget.claims.audit_contracts import AuditReport
from doiget.contract import plain


def as_json(report: AuditReport) -> str:
    """The report as indented JSON text, fields by their wire names."""
    return json.dumps(plain(report), indent=2, ensure_ascii=False) + "\n"
