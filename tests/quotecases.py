"""Quotations with a known answer, for the quote tests and benchmarks/quote_check.py.

Three kinds, per paper:

* sentences of the paper, typed as a writer would (straight quote marks, ``-`` for
  every dash, ``...`` for an ellipsis, one space between words): each must be found,
  on the page where it starts;
* the same sentences with one word changed (its letters reversed, so the result is in
  no paper): each must be reported not found, with the closest passage on that page;
* sentences of the other papers, not in this one: none may be reported found.

A built PDF adds the hard cases: a sentence running over a page break, and one with a
word broken by a hyphen at a line end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from doiget.documents.document import Document, DocumentCache
from doiget.documents.sentences import split_sentences
from doiget.reading.quote import normal
from doiget.reading.reader import Paper, Searchable, check_quote

from pdfmaker import write_lines_pdf

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pdf"
MIN_WORDS = 8
NEAR_MIN_SIMILARITY = 0.8

# The built PDF: two pages; the last sentence of page 1 ends on page 2, and one word of
# page 2 is broken at a line end with a hyphen.
BUILT_PAGES = [
    [
        "Sea ice forms when the surface of the ocean cools below its freezing point.",
        "Brine is pushed out of the growing crystals and sinks into the water below.",
        "The floating cover insulates the ocean and reflects most of the sunlight that",
    ],
    [
        "reaches it back into space during the long polar summer.",
        "Observers on the research vessel recorded every measure-",
        "ment of thickness with a calibrated electromagnetic probe.",
        "Thin ice near open leads was sampled twice to check the drift of the probe.",
    ],
]
ACROSS_PAGES = (
    "The floating cover insulates the ocean and reflects most of the sunlight that reaches "
    "it back into space during the long polar summer.",
    1,
)
HYPHENATED = (
    "Observers on the research vessel recorded every measurement of thickness with a "
    "calibrated electromagnetic probe.",
    2,
)

_TYPED = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2026": "...",
    }
)
_WORD = re.compile(r"[A-Za-z]{5,}")


@dataclass(frozen=True, slots=True)
class Case:
    """A quotation, the page it starts on, and whether it is in the paper."""

    quote: str
    page: int
    present: bool


@dataclass
class Tally:
    """What the checks answered, by kind."""

    tried: int = 0
    right_page: int = 0
    missed: list[str] = field(default_factory=list)
    near_tried: int = 0
    near_found: list[str] = field(default_factory=list)
    near_located: int = 0
    near_similarity: list[float] = field(default_factory=list)
    absent_tried: int = 0
    absent_found: list[str] = field(default_factory=list)


def typed(text: str) -> str:
    """``text`` as a writer types it."""
    return " ".join(text.translate(_TYPED).split())


def near_miss(sentence: str) -> str | None:
    """``sentence`` with its middle long word's letters reversed (None without one)."""
    words = list(_WORD.finditer(sentence))
    if not words:
        return None
    word = words[len(words) // 2]
    turned = word.group(0)[::-1]
    if turned.lower() == word.group(0).lower():
        return None
    return sentence[: word.start()] + turned + sentence[word.end() :]


def sentences(document: Document) -> Iterator[tuple[str, int]]:
    """Sentences of ``document`` that occur once in it, with the page each starts on."""
    text = ""
    starts: list[tuple[int, int]] = []
    for line in document.lines:
        starts.append((len(text), line.page))
        text += line.text + " "
    whole = normal(text).key
    for begin, end in split_sentences(text):
        sentence = " ".join(text[begin:end].split())
        letters = sum(ch.isalpha() for ch in sentence)
        if len(sentence.split()) < MIN_WORDS or letters < len(sentence) * 0.7:
            continue
        if whole.count(normal(sentence).key) != 1:
            continue
        page = next(page for offset, page in reversed(starts) if offset <= begin)
        yield sentence, page


def documents(built_dir: Path) -> dict[str, Document]:
    """Every fixture PDF and the built one, parsed."""
    cache = DocumentCache()
    found = {path.name: cache.load(path) for path in sorted(FIXTURES.glob("*.pdf"))}
    found["built"] = cache.load(write_lines_pdf(built_dir / "built.pdf", BUILT_PAGES))
    return found


def cases(docs: dict[str, Document], every: int = 1) -> dict[str, list[Case]]:
    """The quotations of each paper: every ``every``-th sentence, its near miss, and the
    other papers' sampled sentences."""
    own = {name: list(sentences(document))[::every] for name, document in docs.items()}
    own["built"] += [ACROSS_PAGES, HYPHENATED]
    out: dict[str, list[Case]] = {}
    for name, found in own.items():
        listed = [Case(typed(sentence), page, True) for sentence, page in found]
        for sentence, page in found:
            changed = near_miss(sentence)
            if changed is not None:
                listed.append(Case(typed(changed), page, False))
        others = [s for other, items in own.items() if other != name for s, _ in items]
        whole = normal(docs[name].whole_text()).key
        listed += [Case(typed(s), 0, False) for s in others if normal(s).key not in whole]
        out[name] = listed
    return out


def tally(docs: dict[str, Document], all_cases: dict[str, list[Case]]) -> Tally:
    """Check every case against its paper."""
    result = Tally()
    for name, listed in all_cases.items():
        searchable = Searchable(docs[name])
        paper = Paper(name, name, None)
        for case in listed:
            answer = check_quote(paper, searchable, case.quote)
            if case.present:
                result.tried += 1
                if answer.found and answer.page == case.page:
                    result.right_page += 1
                else:
                    result.missed.append(f"{name} p{case.page}: {case.quote[:80]}")
            elif case.page:
                result.near_tried += 1
                result.near_similarity.append(answer.similarity)
                if answer.found:
                    result.near_found.append(f"{name}: {case.quote[:80]}")
                elif answer.page == case.page and answer.similarity >= NEAR_MIN_SIMILARITY:
                    result.near_located += 1
            else:
                result.absent_tried += 1
                if answer.found:
                    result.absent_found.append(f"{name}: {case.quote[:80]}")
    return result
