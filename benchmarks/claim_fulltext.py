"""Claim support on full text: a manuscript citing the fixture PDFs, audited end to end.

Builds a LaTeX draft whose cited sentences are taken from two real papers
(tests/fixtures/pdf: LongEval, Krishna et al. 2023, and the OpenQuestion JOSE paper),
each in four kinds: as the paper states it (is the best evidence on its page and in
its section?), with one number changed (does a number cue name both numbers?), with
its verb negated (does a negation cue fire?), and cited to the other paper (is it
``not_addressed``?). The draft is audited through the public path (draft reader,
verifier, claim checker, engine) against the test suite's replay upstream, which
serves each work's Crossref record, its Unpaywall record and its PDF, with latency
injected into every answer, through doiget's own rate gate.

The encoder is loaded into the claim workers first (timed apart). Two runs of the
same draft follow, each with a new claim checker: the PDFs fetched into an empty store
(every request paced by the configured per-host rate; the floor is the requests at 5
per second; "last answer at" is when the upstream answered the last of them), then
the PDFs stored (warm: each paper read and its sentences encoded by the first run).
The difference is what fetching and reading a paper the first time cost.

    python benchmarks/claim_fulltext.py                  # 50 ms latency per answer
    python benchmarks/claim_fulltext.py --latency 0.15 --misses
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from doiget.claims import jobs  # noqa: E402
from doiget.claims.audit import audit, claim_checker  # noqa: E402
from doiget.claims.audit_contracts import AuditReport  # noqa: E402
from doiget.claims.contracts import WorkCheck  # noqa: E402
from doiget.claims.manuscripts import read_manuscript  # noqa: E402
from doiget.reading.service import Reader  # noqa: E402
from doiget.runtime import Runtime, load_runtime  # noqa: E402
from doiget.verify.service import Verifier  # noqa: E402

from replay import FIXTURES, ReplayUpstream, Reply  # noqa: E402

JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Paper:
    key: str
    doi: str
    pdf: str  # under tests/fixtures
    title: str
    authors: tuple[tuple[str, str], ...]
    venue: str
    year: int


LONGEVAL = Paper(
    "longeval",
    "10.18653/v1/2023.eacl-main.121",
    "pdf/acl-2023.eacl-main.121-longeval.pdf",
    "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization",
    (
        ("Kalpesh", "Krishna"),
        ("Erin", "Bransom"),
        ("Bailey", "Kuehl"),
        ("Mohit", "Iyyer"),
        ("Pradeep", "Dasigi"),
        ("Arman", "Cohan"),
        ("Kyle", "Lo"),
    ),
    "Proceedings of the 17th Conference of the European Chapter of the Association for "
    "Computational Linguistics",
    2023,
)
JOSE = Paper(
    "openquestion",
    "10.21105/jose.openquestion",
    "pdf/openquestion-jose-paper.pdf",
    "OpenQuestion: A survey building and reporting platform written in Python",
    (("Allan", "Campopiano"), ("Stu", "Cork")),
    "Journal of Open Source Education",
    2022,
)
PAPERS = (LONGEVAL, JOSE)

RQ1 = "3.1 RQ1: Does inter-annotator agreement improve using fine-grained annotations?"
RQ3 = "3.3 RQ3: Is it useful to align summary units to sentences in the source document?"
B1 = "B.1 FINE-grained evaluations of SQuALITY and PubMed summaries"
COMPARISON = "Comparison to other survey development platforms"


@dataclass(frozen=True)
class Stated:
    """A sentence ``paper`` states on ``page`` in ``section``; the same with one number
    changed (``changed``: the sentence, the changed number, the paper's number), and
    with its verb negated."""

    paper: Paper
    sentence: str
    page: int
    section: str
    negated: str
    changed: tuple[str, str, str] | None = None


STATED = [
    Stated(
        LONGEVAL,
        "119 papers (73%) do not perform human evaluation on long-form summaries.",
        1,
        "1 Introduction",
        "119 papers (73%) perform human evaluation on long-form summaries.",
        ("119 papers (37%) do not perform human evaluation on long-form summaries.", "37%", "73%"),
    ),
    Stated(
        LONGEVAL,
        "PubMed is more extractive: 54% of summary bigrams are present in the source.",
        4,
        "3 The LONGEVAL guidelines for faithfulness human evaluation",
        "PubMed is not more extractive: 54% of summary bigrams are present in the source.",
        (
            "PubMed is more extractive: 45% of summary bigrams are present in the source.",
            "45%",
            "54%",
        ),
    ),
    Stated(
        LONGEVAL,
        "FINE data leads to much narrower confidence intervals (0.15 vs 0.35).",
        6,
        RQ1,
        "FINE data does not lead to narrower confidence intervals (0.15 vs 0.35).",
        ("FINE data leads to much narrower confidence intervals (0.15 vs 0.53).", "0.53", "0.35"),
    ),
    Stated(
        LONGEVAL,
        "The no-hint setting scores slightly higher than the SuperPAL hint "
        "settings (93% vs 92% accuracy).",
        8,
        RQ3,
        "The no-hint setting does not score higher than the SuperPAL hint settings "
        "(93% vs 92% accuracy).",
        (
            "The no-hint setting scores slightly higher than the SuperPAL hint settings "
            "(83% vs 92% accuracy).",
            "83%",
            "93%",
        ),
    ),
    Stated(
        LONGEVAL,
        "The no-hint setting takes annotators less time (41.4 vs 48.2 seconds per unit).",
        8,
        RQ3,
        "The no-hint setting does not take annotators less time (41.4 vs 48.2 seconds per unit).",
        (
            "The no-hint setting takes annotators less time (14.4 vs 48.2 seconds per unit).",
            "14.4",
            "41.4",
        ),
    ),
    Stated(
        LONGEVAL,
        "A total of 6 freelancers scored 85% or better.",
        15,
        B1,
        "A total of 6 freelancers did not score 85% or better.",
        ("A total of 6 freelancers scored 58% or better.", "58%", "85%"),
    ),
    Stated(
        LONGEVAL,
        "We interviewed a total of 9 Upwork freelancers for the position.",
        14,
        B1,
        "We did not interview any Upwork freelancers for the position.",
        ("We interviewed a total of 19 Upwork freelancers for the position.", "19", "9"),
    ),
    Stated(
        LONGEVAL,
        "Annotators get significantly faster after the first 20% units.",
        16,
        "E Learning effect while annotating long-form summaries",
        "Annotators do not get significantly faster after the first 20% units.",
        ("Annotators get significantly faster after the first 40% units.", "40%", "20%"),
    ),
    Stated(
        JOSE,
        "All code blocks are removed and the interactivity of the charts is maintained.",
        3,
        "Interactive “code-free” HTML reports",
        "Code blocks are not removed and the interactivity of the charts is not maintained.",
    ),
    Stated(
        JOSE,
        "OpenQuestion uses markdown widgets for rich text and chart widgets that use vega-lite.",
        1,
        "Analysis of survey data",
        "OpenQuestion does not use markdown widgets for rich text or chart widgets.",
    ),
    Stated(
        JOSE,
        "One notable Python-based survey platform is Docassemble.",
        3,
        COMPARISON,
        "Docassemble is not a Python-based survey platform.",
    ),
    Stated(
        JOSE,
        "Docassemble focuses on document generation.",
        3,
        COMPARISON,
        "Docassemble does not focus on document generation.",
    ),
]

KINDS = ("stated", "number changed", "negated", "other paper")


@dataclass(frozen=True)
class Case:
    kind: str
    stated: Stated
    sentence: str
    cited: Paper


@dataclass(frozen=True)
class Run:
    label: str
    report: AuditReport
    seconds: float
    requests: int
    answered: float  # seconds from the start to the upstream's last answer


def cases() -> Iterator[Case]:
    for stated in STATED:
        other = JOSE if stated.paper is LONGEVAL else LONGEVAL
        yield Case("stated", stated, stated.sentence, stated.paper)
        if stated.changed is not None:
            yield Case("number changed", stated, stated.changed[0], stated.paper)
        yield Case("negated", stated, stated.negated, stated.paper)
        yield Case("other paper", stated, stated.sentence, other)


def draft(folder: Path, drafted: list[Case]) -> Path:
    """A LaTeX draft citing each case's sentence on a line of its own, and its .bib."""
    entries = []
    for paper in PAPERS:
        names = " and ".join(f"{family}, {given}" for given, family in paper.authors)
        entries.append(
            f"@article{{{paper.key},\n  title = {{{paper.title}}},\n  author = {{{names}}},\n"
            f"  journal = {{{paper.venue}}},\n  year = {{{paper.year}}},\n"
            f"  doi = {{{paper.doi}}}\n}}"
        )
    (folder / "refs.bib").write_text("\n".join(entries) + "\n")
    body = [
        f"{case.sentence[:-1].replace('%', chr(92) + '%')} \\cite{{{case.cited.key}}}.\n\n"
        for case in drafted
    ]
    tex = folder / "draft.tex"
    tex.write_text(
        "\\documentclass{article}\n\\begin{document}\n"
        + "".join(body)
        + "\\bibliography{refs}\n\\end{document}\n"
    )
    return tex


def route(upstream: ReplayUpstream, latency: float) -> None:
    """Each paper's Crossref record, its Unpaywall record naming an Open Access PDF, and
    the PDF, every answer ``latency`` seconds late."""
    for number, paper in enumerate(PAPERS):
        record = {
            "DOI": paper.doi,
            "type": "journal-article",
            "title": [paper.title],
            "author": [{"given": g, "family": f} for g, f in paper.authors],
            "container-title": [paper.venue],
            "issued": {"date-parts": [[paper.year]]},
        }
        message = {"status": "ok", "message-type": "work", "message": record}
        upstream.route(
            "api.crossref.org",
            f"/works/{paper.doi}",
            Reply(200, json.dumps(message).encode(), JSON, delay=latency),
        )
        location = {
            "url_for_pdf": f"https://europepmc.org/claims/{number}.pdf",
            "url": f"https://europepmc.org/claims/{number}",
            "license": "cc-by",
            "host_type": "repository",
            "version": "publishedVersion",
        }
        unpaywall = {
            "doi": paper.doi,
            "is_oa": True,
            "best_oa_location": location,
            "oa_locations": [location],
            "title": paper.title,
        }
        upstream.route(
            "api.unpaywall.org",
            f"/v2/{paper.doi}",
            Reply(200, json.dumps(unpaywall).encode(), JSON, delay=latency),
        )
        upstream.route(
            "europepmc.org",
            f"/claims/{number}.pdf",
            Reply(
                200,
                (FIXTURES / paper.pdf).read_bytes(),
                {"Content-Type": "application/pdf"},
                delay=latency,
            ),
        )


async def audited(runtime: Runtime, tex: Path) -> tuple[AuditReport, float]:
    """The audit of ``tex`` with a new claim checker, and its wall time."""
    manuscript = read_manuscript(tex)
    reader = Reader(runtime.settings)
    verifier = Verifier.of(runtime)
    checker = claim_checker(runtime, verifier, reader.pool.run)
    started = time.perf_counter()
    try:
        report = await audit(
            manuscript, checker=checker, verifier=verifier, quotes=reader, fetch=True
        )
    finally:
        await reader.aclose()
    return report, time.perf_counter() - started


async def warmed(runtime: Runtime) -> float:
    """Seconds to load the encoder into the claim workers: once per process, before any
    claim is timed."""
    pool = runtime.pool("papers")
    text = "We studied mice. Mortality fell by 14 % in the treated group. Nothing else changed."
    args = ("Mortality fell.", "warm-up", None, text)
    started = time.perf_counter()
    if pool.apart:
        await pool.prepare_apart(jobs.weigh, *args)
    else:
        await pool.run(functools.partial(jobs.weigh, *args))
    return time.perf_counter() - started


def right(case: Case, work: WorkCheck | None) -> bool:
    """Whether the answer on ``case`` is what the kind asks for."""
    if work is None:
        return False
    if case.kind == "other paper":
        return work.addressed == "not_addressed"
    best = work.evidence[0] if work.evidence else None
    if case.kind == "stated":
        placed = best is not None and (best.page, best.section) == (
            case.stated.page,
            case.stated.section,
        )
        return placed and work.addressed in ("addressed", "partly") and not work.cues
    if case.kind == "number changed":
        _, ours, theirs = case.stated.changed or ("", "", "")
        return any(
            cue.kind == "number" and ours in cue.claim_span and theirs in cue.source_span
            for cue in work.cues
        )
    return any(cue.kind == "negation" for cue in work.cues)


def said(work: WorkCheck | None) -> str:
    if work is None:
        return "no answer"
    best = work.evidence[0] if work.evidence else None
    where = f"p.{best.page} {best.section!r}: {best.text[:90]!r}" if best else "no evidence"
    cues = [(cue.kind, cue.claim_span, cue.source_span[:40]) for cue in work.cues]
    return f"{work.addressed} {work.confidence}; {where}; cues {cues}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    parser.add_argument("--misses", action="store_true", help="print each wrong answer")
    parser.add_argument("--claims", type=int, default=None, help="the first N claims only")
    args = parse_args(parser, latency=0.0, claims=6)
    drafted = list(cases())[: args.claims]

    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream() as upstream:
        upstream.start(Path(tmp))
        route(upstream, args.latency)
        folder = Path(tmp) / "paper"
        folder.mkdir()
        tex = draft(folder, drafted)
        env = {
            **upstream.env,
            "DOIGET_CONFIG": f"{tmp}/config.toml",
            "DOIGET_STORE_ROOT": f"{tmp}/papers",
            "DOIGET_LOG_PATH": f"{tmp}/provenance.jsonl",
            "DOIGET_DATA_DIR": f"{tmp}/data",
            "DOIGET_EMAIL": "bench@example.org",
        }
        runs: list[Run] = []
        loading: list[float] = []

        async def timed(label: str, runtime: Runtime) -> None:
            before = len(upstream.requests)
            started = time.monotonic()
            report, seconds = await audited(runtime, tex)
            asked = upstream.requests[before:]
            answered = max((r.finished for r in asked), default=started) - started
            runs.append(Run(label, report, seconds, len(asked), answered))

        async def both() -> None:
            runtime = load_runtime(env)
            try:
                loading.append(await warmed(runtime))
                await timed("PDFs fetched", runtime)
                await timed("PDFs stored (warm)", runtime)
            finally:
                await runtime.aclose()

        anyio.run(both)

    first, report = runs[0].report, runs[1].report
    citations = len(report.citations)
    assert citations == len(drafted), f"{citations} citations read, {len(drafted)} written"
    works = [citation.keys[0].work if citation.keys else None for citation in report.citations]
    fetched_full = sum(
        1
        for c in first.citations
        if c.keys and c.keys[0].work and c.keys[0].work.basis == "full_text"
    )
    print(
        f"{citations} citations of {len(PAPERS)} papers; {args.latency * 1000:.0f} ms "
        f"injected latency; first run: {fetched_full} answered from fetched full text"
    )
    print()
    print("| kind | asks | right | of |")
    print("|---|---|---|---|")
    asks = {
        "stated": "best evidence on its page and in its section, no cue",
        "number changed": "a number cue naming both numbers",
        "negated": "a negation cue",
        "other paper": "not_addressed",
    }
    misses: list[str] = []
    for kind in KINDS:
        mine = [
            (case, work) for case, work in zip(drafted, works, strict=True) if case.kind == kind
        ]
        good = sum(1 for case, work in mine if right(case, work))
        misses += [
            f"{kind}: {case.sentence!r} -> {said(work)}"
            for case, work in mine
            if not right(case, work)
        ]
        print(f"| {kind} | {asks[kind]} | {good} | {len(mine)} |")
    print()
    print(
        f"Loading the encoder into the claim workers (once per process, not timed "
        f"below): {loading[0]:.1f} s"
    )
    print()
    print("| run | wall s | s per citation | requests | floor s (req / 5/s) | last answer at s |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        print(f"| {run.label} | {run.seconds:.1f} | {run.seconds / citations:.2f} | "
              f"{run.requests} | {run.requests / 5.0:.1f} | {run.answered:.1f} |")  # fmt: skip
    if args.misses:
        print()
        for miss in misses:
            print(f"- {miss}")
        for citation in first.citations:
            work = citation.keys[0].work if citation.keys else None
            if work is None or work.basis != "full_text":
                note = work.basis_note if work else citation.note
                print(f"- first run, {citation.place.shown()}: not full text: {note}")


if __name__ == "__main__":
    main()
