"""A manuscript and stand-ins for the verifier, the claim checker and the quotation
reader, for the audit's tests: every answer is decided by the cited work's title."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from doiget.claims.contracts import Cue, Evidence, WorkCheck
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript, Place
from doiget.errors import DoigetError, ErrorCode
from doiget.reading.contracts import CheckQuote, QuoteCheck, SectionRef
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import Match, Problem, Row, Verification

QUOTE_THERE = "ice fronts moved 40 metres a year"
QUOTE_ALTERED = "ice fronts moved 400 metres a year"
HOSTILE = "<script>document.title='pwned'</script> & <b>bold</b>"


def bib(key: str, title: str) -> Cited:
    return Cited(
        key, f"@article{{{key}, title = {{{title}}}, author = {{Doe, Jane}}, year = 2020}}"
    )


def draft(*citations: tuple[str, tuple[str, ...], tuple[str, ...]]) -> Manuscript:
    """A LaTeX draft citing, line after line, with each sentence's keys and quotations."""
    return Manuscript(
        name="draft.tex",
        format="latex",
        citations=[
            Citation(Place("draft.tex", line), sentence, keys, quotes)
            for line, (sentence, keys, quotes) in enumerate(citations, start=3)
        ],
        bibliography={
            "real": bib("real", "Glacier retreat measured"),
            "ghost": bib("ghost", "A paper no one wrote"),
            "retr": bib("retr", "Retracted glacier study"),
            "wrong": bib("wrong", "Coral reef chemistry"),
            "cue": bib("cue", "Glacier retreat in numbers"),
            "part": bib("part", "Alpine glaciers in part"),
            "down": bib("down", "A source that is down"),
            "slow": bib("slow", "A check that never ends"),
            "unread": Cited("unread", None, "its .bib entry has an unbalanced brace at line 9"),
            "hostile": bib("hostile", "Glacier retreat measured again"),
        },
        notes=["a \\cite inside a comment at line 40 was skipped"],
    )


def problem_draft() -> Manuscript:
    """One citation of each kind of answer, and ``real`` cited three times."""
    return draft(
        ("Glaciers retreat (Doe 2020).", ("real",), ()),
        ("A ghost says so.", ("ghost",), ()),
        ("A retracted study says so.", ("retr",), ()),
        ("Reefs say glaciers retreat.", ("wrong",), ()),
        ("Glaciers lost 40 % of their mass.", ("cue",), ()),
        ("Alpine and polar glaciers retreat.", ("part",), ()),
        ("No entry for this key.", ("nokey",), ()),
        ("An unreadable entry.", ("unread",), ()),
        (f'They wrote "{QUOTE_THERE}".', ("real",), (QUOTE_THERE,)),
        (f'They wrote "{QUOTE_ALTERED}".', ("real",), (QUOTE_ALTERED,)),
    )


VERDICTS = {
    "A paper no one wrote": "not_found",
    "Retracted glacier study": "miscited",
}


@dataclass
class FakeVerifier:
    """Verdicts by title; records each call's cited works."""

    calls: list[list[str | None]] = field(default_factory=list)
    failure: DoigetError | None = None
    hang_on: str | None = None  # the title whose lookup never ends

    async def verify_many(
        self,
        cited: Sequence[CitedWork],
        progress: Callable[[int, int, Row], Awaitable[None] | None] | None = None,
    ) -> Verification:
        self.calls.append([work.title for work in cited])
        if self.failure is not None:
            raise self.failure
        rows = []
        for done, work in enumerate(cited, 1):
            if work.title == self.hang_on:
                await anyio.sleep_forever()
            row = _row(work)
            rows.append(row)
            if progress is not None:
                maybe = progress(done, len(cited), row)
                if maybe is not None:
                    await maybe
        return Verification(results=rows)


def _row(work: CitedWork) -> Row:
    verdict = VERDICTS.get(work.title or "", "verified")
    if verdict == "not_found":
        return Row(key=work.key, verdict="not_found", confidence=0.9, note="no real work matches")
    problems = []
    if work.title == "Retracted glacier study":
        problems = [
            Problem(
                field="integrity", kind="retracted", cited=work.title, actual="10.5555/retraction"
            )
        ]
    ref = f"10.5555/{(work.key or 'x').lower()}"
    match = Match(ref=ref, title=f"{work.title} {HOSTILE}", year=2020, venue="J. Glaciol.")
    return Row(key=work.key, verdict=verdict, confidence=0.9, problems=problems, match=match)  # type: ignore[arg-type]


@dataclass
class FakeChecker:
    """Claim checks by key: ``wrong`` is not addressed, ``cue`` differs in a number,
    ``part`` is partly addressed, ``down`` fails as a source down, ``slow`` never ends."""

    calls: list[tuple[str, str | None]] = field(default_factory=list)
    fetched: list[bool] = field(default_factory=list)

    async def check_work(
        self,
        claim: str,
        reference: str | dict[str, Any] | None,
        text: str | None,
        *,
        fetch: bool,
        key: str | None,
    ) -> WorkCheck:
        self.calls.append((claim, key))
        self.fetched.append(fetch)
        if key == "down":
            raise DoigetError(ErrorCode.NETWORK_ERROR, "Crossref did not answer; try again later.")
        if key == "slow":
            await anyio.sleep_forever()
        addressed = {"wrong": "not_addressed", "part": "partly"}.get(key or "", "addressed")
        evidence = [
            Evidence(
                text=f"Ice fronts moved 40 metres a year. {HOSTILE}",
                score=0.81,
                role="rationale",
                page=3,
                section="2 Methods",
            ),
            Evidence(
                text="Measured by repeat photography.",
                score=0.52,
                role="context",
                page=3,
                section="2 Methods",
            ),
        ]
        cues = (
            [Cue(kind="number", claim_span="40 %", source_span="14 %", evidence=0)]
            if key == "cue"
            else []
        )
        return WorkCheck(
            ref=f"10.5555/{key}",
            key=key,
            basis="full_text",
            addressed=addressed,
            confidence=0.8,
            evidence=evidence,
            cues=cues,
            verification=Row(verdict="verified", confidence=1.0),
        )  # type: ignore[arg-type]


class FakeQuotes:
    """The stored papers' text is QUOTE_THERE on page 3; ``10.5555/part`` is not stored."""

    async def check(self, request: CheckQuote) -> QuoteCheck:
        if request.ref == "10.5555/part":
            raise DoigetError(ErrorCode.NOT_FOUND, "10.5555/part is not in the library.")
        found = request.quote == QUOTE_THERE
        return QuoteCheck(
            ok=True,
            found=found,
            similarity=1.0 if found else 0.94,
            passage=QUOTE_THERE,
            page=3,
            section=SectionRef(title="2 Methods"),
        )
