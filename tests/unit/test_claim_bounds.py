"""What one claim call or one audit may cost: the works a call checks, the distinct works a
manuscript cites, and claims and inline text measured in the form a tokenizer reads
(compatibility characters spelled out: U+FDFA is 18 characters), so a short string of
them never stands for a long claim."""

from __future__ import annotations

import json
import time
import unicodedata
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from auditfakes import FakeChecker, FakeQuotes, FakeVerifier
from doiget.claims.audit import MAX_CITED_WORKS, Audit
from doiget.claims.contracts import (
    MAX_CALL_WORKS,
    MAX_CLAIM_CHARS,
    MAX_CLAIMS,
    MAX_INLINE_CHARS,
    CheckClaims,
    ClaimItem,
)
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript, Place
from doiget.claims.service import ClaimChecker
from doiget.errors import DoigetError

# The longest the event loop may stall while 10,000 citations are answered and gathered
# into a report: 0.15 s measured on a loaded 2-core machine, against the 1.3 s it
# stalled when every citation was a task of its own and the report built on the loop.
LOOP_GAP_SECONDS = 0.6
# Characters that spell out to many under NFKC: an Arabic ligature (18), a Japanese
# square word (up to 4), a ligature of Latin letters (3).
EXPANDING = ["\ufdfa", "\u3300", "\ufb03"]


@pytest.mark.parametrize("char", EXPANDING)
def test_a_claim_is_measured_with_its_compatibility_characters_spelled_out(char: str) -> None:
    spelled = len(unicodedata.normalize("NFKC", char))
    fits = MAX_CLAIM_CHARS // spelled
    ClaimItem(claim=char * fits, text="A source.")
    with pytest.raises(ValidationError, match="spelled out"):
        ClaimItem(claim=char * (fits + 1), text="A source.")


def test_a_claim_of_2000_ligatures_is_refused_as_36000_characters() -> None:
    with pytest.raises(ValidationError, match="36,000 characters"):
        ClaimItem(claim="\ufdfa" * 2_000, text="A source.")
    with pytest.raises(ValidationError, match="2,001 characters"):
        ClaimItem(claim="e\u0301" * 1_000 + "x", text="A source.")  # composes to 1,001


def test_inline_text_is_measured_with_its_compatibility_characters_spelled_out() -> None:
    fits = MAX_INLINE_CHARS // 18
    ClaimItem(claim="A claim.", text="\ufdfa" * fits)
    with pytest.raises(ValidationError, match="spelled out"):
        ClaimItem(claim="A claim.", text="\ufdfa" * (fits + 1))


async def test_the_core_refuses_a_long_claim_however_it_arrives() -> None:
    """A manuscript's sentence reaches the core without the request's validation."""

    class Unused:
        def run(self, *args: Any) -> Any:
            raise AssertionError("a refused claim is never weighed")

    checker = ClaimChecker(None, None, Unused())  # type: ignore[arg-type]
    with pytest.raises(DoigetError) as refused:
        await checker.check_work("\ufdfa" * 200, None, "A source.", fetch=False)
    assert refused.value.code.value == "INVALID_REF" and "spelled out" in refused.value.message


@pytest.mark.parametrize(
    ("claims", "refs"),
    [(50, 10), (11, 10), (17, 6), (34, 3)],
)
def test_a_call_checks_at_most_a_bounded_number_of_works(claims: int, refs: int) -> None:
    items: list[dict[str, Any]] = [
        {"claim": f"Claim {n}.", "ref": [f"10.1000/{n}.{m}" for m in range(refs)]}
        for n in range(claims)
    ]
    with pytest.raises(ValidationError, match=f"at most {MAX_CALL_WORKS}"):
        CheckClaims.model_validate({"items": items})
    CheckClaims.model_validate({"items": items[: MAX_CALL_WORKS // refs]})


def _citing(keys: int, citations: int | None = None) -> Manuscript:
    """A draft whose citations cite ``keys`` distinct works, each with its entry."""
    count = citations or keys
    return Manuscript(
        "review.tex",
        "latex",
        [
            Citation(Place("review.tex", n + 1), f"Claim {n}.", (f"k{n % keys}",), ())
            for n in range(count)
        ],
        {f"k{n}": Cited(f"k{n}", f"@article{{k{n}, title={{T{n}}}}}") for n in range(keys)},
        [],
    )


@pytest.mark.parametrize("keys", [MAX_CITED_WORKS + 1, 10_000])
async def test_an_audit_citing_too_many_distinct_works_is_refused_before_any_lookup(
    keys: int,
) -> None:
    verifier, checker = FakeVerifier(), FakeChecker()
    with pytest.raises(DoigetError) as refused:
        run = Audit(
            _citing(keys), checker=checker, verifier=verifier, quotes=FakeQuotes(), fetch=False
        )
        await run.run()
    assert refused.value.code.value == "INVALID_REF"
    assert f"{keys:,} distinct works" in refused.value.message
    assert f"at most {MAX_CITED_WORKS:,}" in refused.value.message
    assert "in parts" in refused.value.message
    assert verifier.calls == [] and checker.calls == []


def test_many_citations_of_fewer_works_are_audited() -> None:
    Audit(
        _citing(MAX_CITED_WORKS, citations=5_000),
        checker=FakeChecker(),
        verifier=FakeVerifier(),
        quotes=FakeQuotes(),
        fetch=False,
    )


@pytest.mark.parametrize(
    ("name", "limits"),
    [
        ("doiget_check_claims", [f"{MAX_CLAIMS} claims", f"{MAX_CALL_WORKS} works", "13 lookups"]),
        ("doiget_audit_manuscript", [f"{MAX_CITED_WORKS:,} works", "(stdio)"]),
    ],
)
def test_the_claim_tools_state_their_limits_and_that_fetch_stores(
    name: str, limits: list[str]
) -> None:
    from doiget.server.snapshot import stored
    from doiget.verify.service import MAX_REQUESTS

    (tool,) = [t for ts in stored().values() for t in ts["tools"] if t["name"] == name]
    schema = json.dumps(tool["inputSchema"], separators=(",", ":"), ensure_ascii=False)
    assert len((tool["name"] + tool["description"] + schema).encode()) <= 900
    assert all(limit in tool["description"] for limit in limits)
    # the verifier's lookups, and at most four for an abstract (doiget.claims.basis)
    assert MAX_REQUESTS + 4 == 13
    # fetch stores a PDF in the library: the tool does not claim to change nothing
    assert tool["annotations"]["readOnlyHint"] is False
    assert tool["annotations"]["openWorldHint"] is True


async def test_a_fault_on_one_claim_leaves_the_others_answered() -> None:
    from doiget.workpool import WorkPool

    def weigh(claim: str, ref: str, pdf: Any, text: str | None) -> Any:
        if "odd" in claim:
            raise ValueError("an engine fault on odd input")
        return SimpleNamespace(addressed="addressed", confidence=0.9, evidence=[], cues=[])

    pool = WorkPool(1, 8)
    try:
        checker = ClaimChecker(None, None, pool, weigh=weigh)  # type: ignore[arg-type]
        items = [{"claim": claim, "text": "A source."} for claim in ("One.", "An odd one.", "Two.")]
        answers = await checker.check(CheckClaims.model_validate({"items": items}))
    finally:
        pool.close()
    first, odd, last = answers.results
    assert first.works[0].addressed == last.works[0].addressed == "addressed"
    assert odd.error is not None and odd.error["code"] == "INTERNAL_ERROR"
    assert "again" in odd.error["message"] and not odd.works


async def test_a_long_audits_report_is_built_off_the_event_loop() -> None:
    """10,000 citations (none with an entry: nothing is looked up) take a second or
    more to gather into a report; the event loop keeps ticking meanwhile."""
    import anyio.to_thread

    async def offload(work: Any) -> Any:
        return await anyio.to_thread.run_sync(work)

    run = Audit(
        replace(_citing(MAX_CITED_WORKS, citations=10_000), bibliography={}),
        checker=FakeChecker(),
        verifier=FakeVerifier(),
        quotes=FakeQuotes(),
        fetch=False,
        offload=offload,
    )
    gaps: list[float] = []
    done = False

    async def tick() -> None:
        last = time.perf_counter()
        while not done:
            await anyio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async def audit() -> None:
        nonlocal done
        report = await run.run()
        done = True
        assert report.summary.citations == 10_000

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        group.start_soon(audit)
    assert max(gaps) < LOOP_GAP_SECONDS, sorted(gaps)[-5:]
