"""Figure and table debris in passages, before and after it is dropped.

Each PDF of the test fixtures (real papers) is read and chunked as ingestion does
(default project: 200 model tokens, 32 overlap, the MiniLM tokenizer), once with the
text layer as it is and once without number runs and their labels
(:mod:`doiget.documents.debris`). Reported per PDF and in all: chunks, chunks that are
mostly numbers (half or more of their tokens), chunks holding a run of four or more
numbers in a row (a tick scale or a table row), the share of number tokens among all
tokens, lines dropped, and captions kept.

    python benchmarks/passage_debris.py
    python benchmarks/passage_debris.py --pdf-dir DIR
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from smoke import parse_args

from doiget.documents.debris import NUMBER, is_caption, without_debris
from doiget.documents.pdftext import read_pdf
from doiget.documents.sections import SectionedLine, sectioned
from doiget.documents.sentences import sentences
from doiget.library.chunking import Chunk, chunk_sentences
from doiget.library.embedding import embedder_for
from doiget.library.projects import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_EMBED_MODEL,
)

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pdf"
RUN = 4


def _numbers(tokens: Sequence[str]) -> list[bool]:
    return [bool(NUMBER.fullmatch(token)) for token in tokens]


def _has_run(flags: Sequence[bool]) -> bool:
    streak = 0
    for flag in flags:
        streak = streak + 1 if flag else 0
        if streak >= RUN:
            return True
    return False


def measure(chunks: Sequence[Chunk]) -> dict[str, float]:
    mostly = runs = numbers = tokens = 0
    for chunk in chunks:
        words = chunk.text.split()
        flags = _numbers(words)
        mostly += sum(flags) * 2 >= len(words)
        runs += _has_run(flags)
        numbers += sum(flags)
        tokens += len(words)
    return {
        "chunks": len(chunks),
        "mostly": mostly,
        "runs": runs,
        "share": numbers / tokens if tokens else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=FIXTURES)
    args = parse_args(parser)
    count = embedder_for(DEFAULT_EMBED_MODEL).count_tokens

    def chunked(lines: Sequence[SectionedLine]) -> list[Chunk]:
        return chunk_sentences(sentences(lines), DEFAULT_CHUNK_TOKENS, DEFAULT_CHUNK_OVERLAP, count)

    print(
        "| PDF | chunks before / after | mostly numbers | with a run of 4+ numbers "
        "| number tokens | lines dropped | captions kept |"
    )
    print("|---|---|---|---|---|---|---|")
    totals: dict[str, list[Chunk]] = {"before": [], "after": []}
    for pdf in sorted(args.pdf_dir.glob("*.pdf")):
        lines = sectioned(read_pdf(pdf).lines)
        kept = without_debris(lines)
        before, after = chunked(lines), chunked(kept)
        totals["before"] += before
        totals["after"] += after
        b, a = measure(before), measure(after)
        captions = sum(1 for item in lines if is_caption(item.line.text))
        captions_kept = sum(1 for item in kept if is_caption(item.line.text))
        print(
            f"| {pdf.name} | {b['chunks']} / {a['chunks']} | {b['mostly']} → {a['mostly']} "
            f"| {b['runs']} → {a['runs']} | {b['share']:.1%} → {a['share']:.1%} "
            f"| {len(lines) - len(kept)} of {len(lines)} | {captions_kept} of {captions} |"
        )
    b, a = measure(totals["before"]), measure(totals["after"])
    print(
        f"| all | {b['chunks']} / {a['chunks']} | {b['mostly']} → {a['mostly']} "
        f"| {b['runs']} → {a['runs']} ({b['runs'] / b['chunks']:.0%} → "
        f"{a['runs'] / max(a['chunks'], 1):.0%}) | {b['share']:.1%} → {a['share']:.1%} | | |"
    )


if __name__ == "__main__":
    main()
