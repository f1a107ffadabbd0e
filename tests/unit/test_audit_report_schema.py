"""The audit's report as the MCP client receives it: every report, finished or cut
short, validates against the doiget_audit_manuscript tool's outputSchema."""

from __future__ import annotations

import jsonschema
import pytest

from doiget.claims.audit_contracts import AuditReport, Summary
from doiget.contract import plain
from doiget.server.schema import output_schema

COUNTS = dict.fromkeys(
    ("citations", "cited_works", "not_real", "missing", "miscited", "retracted",
     "not_addressed", "partly", "with_cues", "quotes_not_found", "unchecked"),
    0,
)  # fmt: skip


@pytest.mark.parametrize("stopped", [None, "interrupted (Ctrl-C)"])
def test_a_report_validates_against_the_tools_output_schema(stopped: str | None) -> None:
    report = AuditReport(name="draft.tex", format="latex", partial=stopped is not None,
                         stopped=stopped, summary=Summary(**COUNTS), citations=[])  # fmt: skip
    rendered = plain(report)
    jsonschema.validate(rendered, output_schema(AuditReport))
    assert ("stopped" in rendered) is (stopped is not None)
    assert AuditReport.model_validate(rendered) == report
