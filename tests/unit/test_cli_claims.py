"""``doiget claim``'s text for people: per work its answer, basis and why, each piece of
evidence with where it stands, and each cue naming both spans."""

from __future__ import annotations

import pytest

from doiget.claims.contracts import ClaimResult, Cue, Evidence, WorkCheck
from doiget.cli.claims import _show
from doiget.verify.contracts import Row

FULL = WorkCheck(
    ref="10.1234/x",
    basis="full_text",
    addressed="partly",
    confidence=0.71,
    evidence=[
        Evidence(
            text="Mortality fell by 14 %.", score=0.8, role="rationale", page=4, section="3 Results"
        ),
        Evidence(text="We studied mice.", score=0.4, role="context", page=2, section="2 Methods"),
    ],
    cues=[
        Cue(kind="number", claim_span="40 %", source_span="14 %", evidence=0),
        Cue(kind="population", claim_span="patients", source_span="mice", evidence=1),
    ],
)
ABSTRACT = WorkCheck(
    ref="2401.00001",
    basis="abstract",
    basis_note="no stored PDF",
    addressed="addressed",
    confidence=0.9,
    evidence=[Evidence(text="It rose.", score=0.9, role="rationale", start=10, end=18)],
)
GONE = WorkCheck(
    key="smith20",
    basis="unavailable",
    basis_note="no real work matches the reference",
    addressed="unavailable",
    verification=Row(verdict="not_found", confidence=0.5, note="no match"),
)


def _shown(capsys: pytest.CaptureFixture[str], result: ClaimResult) -> str:
    _show(result)
    return " ".join(capsys.readouterr().out.split())


def test_each_work_shows_its_answer_basis_evidence_and_cues(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = _shown(capsys, ClaimResult(claim="c", works=[FULL, ABSTRACT, GONE]))
    assert "partly 10.1234/x (0.71) basis: full_text" in said
    assert "1. [p. 4, 3 Results] (0.80, rationale) Mortality fell by 14 %." in said
    assert "2. [p. 2, 2 Methods] (0.40, context) We studied mice." in said
    assert "number cue: the claim says '40 %', evidence 1 says '14 %'" in said
    assert "population cue: the claim says 'patients', evidence 2 says 'mice'" in said
    assert "addressed 2401.00001 (0.90) basis: abstract no stored PDF" in said
    assert "1. [at 10] (0.90, rationale) It rose." in said
    assert "unavailable smith20 basis: unavailable no real work matches" in said
    assert "reference not_found: no match" in said


def test_a_claim_that_failed_shows_its_error(capsys: pytest.CaptureFixture[str]) -> None:
    failed = ClaimResult(claim="c", error={"code": "INVALID_REF", "message": "give a ref."})
    assert _shown(capsys, failed) == "INVALID_REF: give a ref."
