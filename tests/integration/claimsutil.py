"""The claim core as the program builds it, with quick retries and no kept answers, and
a stand-in for the engine that weighs by shared words.

The stand-in keeps these tests about what the core does (which text is the basis, how
refs are resolved, what is asked upstream, what is kept, where the work runs): where
the evidence stands (page, section, offsets) comes from the same document and text
the engine is given, so those assertions hold for any engine.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from doiget.claims.contracts import Addressed, Cue, Evidence
from doiget.claims.service import ClaimChecker
from doiget.documents.sentences import split_sentences
from doiget.models import Work
from doiget.net.network import Network
from doiget.papers.contracts import PaperFetch
from doiget.papers.service import Papers
from doiget.papers.store import Store
from doiget.reading.jobs import load
from doiget.refs import Ref, parse_ref
from doiget.runtime import load_runtime
from doiget.verify.lookup import AnswerStore
from doiget.verify.service import INDEXES, Verifier
from doiget.workpool import WorkPool

from netutil import FAST_RETRY

T = TypeVar("T")

PDFS = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
JOSE_PDF = PDFS / "openquestion-jose-paper.pdf"
# A sentence the JOSE paper prints on its page 3.
JOSE_SENTENCE = "All code blocks are removed and the interactivity of the charts is maintained."
PNAS = "10.1073/pnas.1414271111"
PNAS_CLAIM = "Negative words are used more often than positive ones in human language."
ATTENTION = "1706.03762"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"

# The threads the stand-in ran in (the event loop's must never be one of them).
WEIGHED_IN: list[int] = []


@dataclass(frozen=True)
class Weighed:
    addressed: Addressed
    confidence: float
    evidence: list[Evidence]
    cues: list[Cue] = field(default_factory=list)


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 3}


def weigh_by_words(claim: str, ref: str, pdf: Path | None, text: str | None) -> Weighed:
    """The best unit by the share of the claim's words it holds: a document's lines
    (with their page and section) or a text's sentences (with their offsets)."""
    WEIGHED_IN.append(threading.get_ident())
    wanted = _words(claim)
    found: list[Evidence] = []
    if pdf is not None:
        document = load(pdf, ref)
        for index, line in enumerate(document.lines):
            section = document.sections[document.owners[index]].title
            share = len(wanted & _words(line.text)) / max(1, len(wanted))
            found.append(
                Evidence(text=line.text, score=share, role="rationale", page=line.page,
                         section=section)
            )  # fmt: skip
    else:
        source = text or ""
        for start, end in split_sentences(source):
            share = len(wanted & _words(source[start:end])) / max(1, len(wanted))
            found.append(
                Evidence(text=source[start:end], score=share, role="rationale", start=start,
                         end=end)
            )  # fmt: skip
    found.sort(key=lambda evidence: -evidence.score)
    best = found[0].score if found else 0.0
    return Weighed("addressed" if best >= 0.5 else "not_addressed", best, found[:5])


@dataclass
class Checking:
    checker: ClaimChecker
    papers: Papers
    network: Network
    pool: WorkPool

    async def aclose(self) -> None:
        await self.checker.aclose()
        await self.papers.aclose()
        await self.network.aclose()
        self.pool.close()


def make_checker(env: dict[str, str]) -> Checking:
    """The claim core on ``env``'s upstreams; the verifier keeps no answer on disk, so
    only the core's own memory can spare a request."""
    runtime = load_runtime(env)
    network = Network(runtime.settings, retry=FAST_RETRY)
    papers = Papers(runtime, network)
    indexes = [name for name in INDEXES if runtime.profile.metadata.allows(name)]
    verifier = Verifier(network, AnswerStore(None), indexes=indexes)
    pool = WorkPool(2, 32)

    async def fetch(ref: Ref) -> object:
        return await papers.fetch(PaperFetch(ref=ref.canonical))

    checker = ClaimChecker(papers.store, verifier, pool, fetch, weigh=weigh_by_words)
    return Checking(checker, papers, network, pool)


async def checking(env: dict[str, str], work: Callable[[ClaimChecker], Awaitable[T]]) -> T:
    made = make_checker(env)
    try:
        return await work(made.checker)
    finally:
        await made.aclose()


def store_paper(root: Path, ref_text: str, pdf: Path | None, abstract: str | None = None) -> None:
    """A stored entry of ``ref_text``, with a copy of ``pdf`` when given."""
    store = Store(root)
    ref = parse_ref(ref_text)
    target = None
    if pdf is not None:
        target = store.pdf_path(ref)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, target)
    work = Work(source="crossref", title="A stored paper", abstract=abstract)
    store.write_metadata(ref, work, doiget_fields={}, pdf=target)
