"""The manuscript audit: each cited work verified once, each citation checked against
what it cites, the summary, problems first, and what an audit cut short keeps."""

from __future__ import annotations

import json

import anyio
import pytest

from auditfakes import (
    QUOTE_ALTERED,
    QUOTE_THERE,
    FakeChecker,
    FakeQuotes,
    FakeVerifier,
    draft,
    problem_draft,
)
from doiget.claims.audit import Audit, audit
from doiget.claims.audit_contracts import AuditReport
from doiget.claims.report import worst_first
from doiget.claims.report.document import as_json
from doiget.errors import DoigetError, ErrorCode


async def _audit(manuscript=None, **kwargs):  # type: ignore[no-untyped-def]
    verifier, checker = kwargs.pop("verifier", FakeVerifier()), FakeChecker()
    report = await audit(
        manuscript or problem_draft(),
        checker=checker,
        verifier=verifier,
        quotes=FakeQuotes(),
        fetch=True,
        **kwargs,
    )
    return report, verifier, checker


async def test_the_summary_counts_each_kind_of_answer() -> None:
    report, _, _ = await _audit()
    summary = report.summary
    assert (summary.citations, summary.cited_works) == (10, 8)
    assert summary.not_real == 1  # ghost
    assert summary.missing == 2  # nokey, and unread whose entry could not be read
    assert summary.retracted == 1 and summary.miscited == 1  # retr
    assert (summary.not_addressed, summary.partly, summary.with_cues) == (1, 1, 1)
    assert summary.quotes_not_found == 1
    assert summary.unchecked == 0 and report.partial is False and report.stopped is None
    assert report.notes == ["a \\cite inside a comment at line 40 was skipped"]


async def test_each_distinct_key_is_verified_once_and_each_sentence_checked() -> None:
    report, verifier, checker = await _audit()
    assert len(verifier.calls) == 1
    titles = verifier.calls[0]
    assert titles.count("Glacier retreat measured") == 1  # cited three times
    assert "A paper no one wrote" in titles and len(titles) == 6  # nokey, unread: no entry
    assert [row.key for row in report.works] == ["real", "ghost", "retr", "wrong", "cue", "part"]
    # Three sentences cite ``real``: each is weighed against it; a missing key never is.
    assert sum(key == "real" for _, key in checker.calls) == 3
    assert not {"nokey", "unread"} & {key for _, key in checker.calls}


async def test_a_sentence_citing_a_key_twice_is_checked_once() -> None:
    twice = draft(("Glaciers retreat.", ("real",), ()), ("Glaciers retreat.", ("real", "real"), ()))
    report, _, checker = await _audit(twice)
    assert checker.calls == [("Glaciers retreat.", "real")]
    assert [len(c.keys) for c in report.citations] == [1, 1]


async def test_each_citation_gives_each_key_its_verdict_claim_check_and_quotes() -> None:
    report, _, _ = await _audit()
    first = report.citations[0]
    assert (first.index, first.place.file, first.place.line) == (1, "draft.tex", 3)
    assert first.status == "ok" and first.checked
    (real,) = first.keys
    assert real.verdict == "verified" and real.work is not None
    assert real.work.addressed == "addressed" and real.work.evidence[0].page == 3
    dumped = json.loads(as_json(report))
    assert dumped["ok"] is True
    assert "verification" not in dumped["citations"][0]["keys"][0]["work"]  # once, in works[]
    by_index = {c.index: c for c in report.citations}
    assert by_index[2].status == "not_real" and by_index[2].keys[0].verdict == "not_found"
    assert by_index[3].status == "retracted"
    assert by_index[4].status == "not_addressed"
    assert by_index[5].status == "cues" and by_index[5].keys[0].work.cues[0].kind == "number"  # type: ignore[union-attr]
    assert by_index[6].status == "partly"
    assert by_index[7].status == "missing" and "not in the bibliography" in (
        by_index[7].keys[0].missing or ""
    )
    assert by_index[8].keys[0].missing == "its .bib entry has an unbalanced brace at line 9"
    there, altered = by_index[9].keys[0].quotes[0], by_index[10].keys[0].quotes[0]
    assert (there.quote, there.found, there.page, there.section) == (
        QUOTE_THERE, True, 3, "2 Methods"
    )  # fmt: skip
    assert (altered.quote, altered.found, altered.passage) == (QUOTE_ALTERED, False, QUOTE_THERE)
    assert by_index[10].status == "quote_differs"


async def test_quotes_not_looked_for_say_why() -> None:
    manuscript = draft(
        ('Alpine glaciers "retreat in part".', ("part",), ("retreat in part",)),
        ('A ghost "says so".', ("ghost",), ("says so",)),
    )
    report, _, _ = await _audit(manuscript)
    stored, unidentified = (c.keys[0].quotes[0] for c in report.citations)
    assert stored.found is None and "not in the library" in (stored.note or "")
    assert unidentified.found is None and "not identified" in (unidentified.note or "")


async def test_citations_come_in_reading_order_and_worst_first_in_reports() -> None:
    report, _, _ = await _audit()
    assert [c.index for c in report.citations] == list(range(1, 11))
    ordered = [(c.status, c.index) for c in worst_first(report)]
    assert ordered == [
        ("not_real", 2), ("missing", 7), ("missing", 8), ("retracted", 3),
        ("not_addressed", 4), ("quote_differs", 10), ("cues", 5), ("partly", 6),
        ("ok", 1), ("ok", 9),
    ]  # fmt: skip


async def test_a_citation_of_several_works_takes_the_worst_status() -> None:
    report, _, _ = await _audit(draft(("Both say so.", ("real", "wrong", "part"), ())))
    (citation,) = report.citations
    assert citation.status == "not_addressed"
    assert [k.work.addressed for k in citation.keys] == ["addressed", "not_addressed", "partly"]  # type: ignore[union-attr]
    assert (report.summary.not_addressed, report.summary.partly) == (1, 1)


async def test_a_source_down_leaves_its_citation_unchecked_and_the_rest_checked() -> None:
    manuscript = draft(
        ("Glaciers retreat.", ("real",), ()),
        ("A source down.", ("down", "real"), ()),
        ("Reefs.", ("wrong",), ()),
    )
    report, _, _ = await _audit(manuscript)
    assert report.partial is True and report.summary.unchecked == 1
    first, down, reefs = report.citations
    assert first.checked and reefs.checked and reefs.status == "not_addressed"
    assert not down.checked and down.status == "unchecked"
    assert down.note == "not checked against down"
    assert "Crossref did not answer" in (down.keys[0].note or "")
    assert down.keys[1].work is not None  # the other cited work was checked


async def test_a_fault_checking_one_work_leaves_the_others_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Faulty(FakeChecker):
        async def check_work(self, claim, reference, text, *, fetch, key):  # type: ignore[no-untyped-def]
            if key == "wrong":
                raise ZeroDivisionError
            return await super().check_work(claim, reference, text, fetch=fetch, key=key)

    manuscript = draft(("Reefs.", ("wrong",), ()), ("Glaciers retreat.", ("real",), ()))
    report = await audit(manuscript, checker=Faulty(), verifier=FakeVerifier(),
                         quotes=FakeQuotes(), fetch=False)  # fmt: skip
    faulty, fine = report.citations
    assert not faulty.checked and "doiget_check_claims" in (faulty.keys[0].note or "")
    assert fine.checked and fine.status == "ok" and report.partial
    assert "the claim check of wrong failed" in caplog.text


async def test_a_verifier_failure_leaves_verdicts_out_and_says_why() -> None:
    failing = FakeVerifier(failure=DoigetError(ErrorCode.RATE_LIMITED, "Too many requests."))
    report, _, _ = await _audit(draft(("Glaciers retreat.", ("real",), ())), verifier=failing)
    (key,) = report.citations[0].keys
    assert key.verdict is None and key.work is not None
    assert key.note == "not verified: Too many requests."
    assert report.citations[0].status == "unchecked" and report.works == []
    # The summary counts it among the citations not checked, as its status says.
    assert report.summary.unchecked == 1


async def test_a_cancelled_audit_reports_what_it_checked_and_what_it_did_not() -> None:
    manuscript = draft(
        ("Glaciers retreat.", ("real",), ()),
        ("A check that never ends.", ("slow",), ()),
        ("Reefs.", ("wrong",), ()),
        ("A ghost.", ("ghost",), ()),
    )
    messages: list[tuple[int, int, str]] = []
    run = Audit(manuscript, checker=FakeChecker(), verifier=FakeVerifier(), quotes=FakeQuotes(),
                fetch=False)  # fmt: skip
    with anyio.move_on_after(30) as scope:
        async with anyio.create_task_group() as group:

            async def progress(done: int, total: int, message: str) -> None:
                messages.append((done, total, message))
                if done == total - 1:  # all but the endless check
                    group.cancel_scope.cancel()

            group.start_soon(run.run, progress)
    assert not scope.cancelled_caught, "the audit should have been cut short at once"
    report = run.report(stopped="interrupted (Ctrl-C)")
    assert report.partial and report.stopped == "interrupted (Ctrl-C)"
    assert [c.checked for c in report.citations] == [True, False, True, True]
    slow = report.citations[1]
    assert slow.status == "unchecked" and slow.note == "not checked: interrupted (Ctrl-C)"
    assert slow.keys[0].verdict == "verified"  # verified before the cut
    assert report.summary.unchecked == 1 and report.summary.not_real == 1
    # Progress: one step per cited work, then one per citation.
    assert messages[0][1] == 8 and messages[-1][0] == 7
    assert any(message.startswith("draft.tex:5: not_addressed") for *_, message in messages)


async def test_an_audit_cut_short_while_verifying_keeps_the_verdicts_it_has() -> None:
    verifier = FakeVerifier(hang_on="Retracted glacier study")
    run = Audit(problem_draft(), checker=FakeChecker(), verifier=verifier, quotes=FakeQuotes(),
                fetch=False)  # fmt: skip
    async with anyio.create_task_group() as group:

        async def progress(done: int, total: int, message: str) -> None:
            if done == 2:  # real and ghost verified; retr's lookup never ends
                group.cancel_scope.cancel()

        group.start_soon(run.run, progress)
    report = run.report(stopped="a source stopped answering")
    verdicts = {c.keys[0].key: c.keys[0].verdict for c in report.citations}
    assert (verdicts["real"], verdicts["ghost"], verdicts["retr"]) == (
        "verified",
        "not_found",
        None,
    )
    assert [row.key for row in report.works] == ["real", "ghost"]
    assert report.summary.not_real == 1 and report.summary.unchecked == 10
    assert report.citations[1].status == "not_real"  # what is known is said


def test_an_audit_stopped_before_it_began_lists_every_citation_unchecked() -> None:
    run = Audit(problem_draft(), checker=FakeChecker(), verifier=FakeVerifier(),
                quotes=FakeQuotes(), fetch=False)  # fmt: skip
    report = run.report()
    assert report.partial and report.summary.unchecked == 10
    assert all(
        c.note == "not checked: the audit stopped before reaching it" for c in report.citations
    )


async def test_the_json_document_reads_back_as_the_report() -> None:
    report, _, _ = await _audit()
    assert AuditReport.model_validate_json(as_json(report)) == report


async def test_an_empty_manuscript_is_an_empty_report() -> None:
    report, verifier, _ = await _audit(draft())
    assert report.summary.citations == 0 and not report.partial and verifier.calls == []


def test_the_audit_tool_fits_the_budget_of_the_model() -> None:
    from doiget.server.snapshot import stored

    (tool,) = [
        t for ts in stored().values() for t in ts["tools"] if t["name"] == "doiget_audit_manuscript"
    ]
    schema = json.dumps(tool["inputSchema"], separators=(",", ":"), ensure_ascii=False)
    assert len((tool["name"] + tool["description"] + schema).encode()) <= 900
    assert tool["annotations"]["openWorldHint"] is True
