"""What the claim tools return validates against the outputSchema they declare, which
a client checks every structured result against: an optional field is absent, never
null, unless the schema allows null."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from auditfakes import FakeChecker, FakeQuotes, FakeVerifier, problem_draft
from doiget.claims.audit import Audit
from doiget.claims.contracts import ClaimChecks, ClaimResult, WorkCheck
from doiget.contract import plain
from doiget.server.snapshot import stored


def _schema(name: str) -> dict[str, Any]:
    (tool,) = [t for ts in stored().values() for t in ts["tools"] if t["name"] == name]
    schema: dict[str, Any] = tool["outputSchema"]
    return schema


def _errors(name: str, document: Any) -> list[str]:
    validator = Draft202012Validator(_schema(name))
    return [f"{list(error.path)}: {error.message}" for error in validator.iter_errors(document)]


def _audit() -> Audit:
    return Audit(
        problem_draft(),
        checker=FakeChecker(),
        verifier=FakeVerifier(),
        quotes=FakeQuotes(),
        fetch=False,
    )


async def test_a_whole_audit_validates_against_the_declared_schema() -> None:
    report = await _audit().run()
    assert report.stopped is None and report.citations
    assert _errors("doiget_audit_manuscript", plain(report)) == []


@pytest.mark.parametrize("stopped", [None, "interrupted (Ctrl-C)"])
def test_an_audit_cut_short_or_not_begun_validates_against_the_declared_schema(
    stopped: str | None,
) -> None:
    document = plain(_audit().report(stopped=stopped))
    assert ("stopped" in document) is (stopped is not None)
    assert _errors("doiget_audit_manuscript", document) == []


def test_claim_answers_validate_against_the_declared_schema() -> None:
    answers = ClaimChecks(
        results=[
            ClaimResult(claim="A claim.", works=[WorkCheck(basis="unavailable",
                        addressed="unavailable", basis_note=None, confidence=None, key=None)]),
            ClaimResult(claim="Another.", error={"code": "INVALID_REF", "message": "m"}),
        ]
    )  # fmt: skip
    assert _errors("doiget_check_claims", plain(answers)) == []
