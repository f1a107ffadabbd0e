"""Quotation checks on the test fixtures' PDFs and a built one: how many sentences of
each paper are found on the page they start on, and how many quotations that are not
in the paper are reported found (near misses with one word changed, and the other
papers' sentences). The cases are those of tests/quotecases.py, all of them.

    python benchmarks/quote_check.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import quotecases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="try every N-th sentence")
    args = parse_args(parser, every=40)
    with tempfile.TemporaryDirectory() as folder:
        docs = quotecases.documents(Path(folder))
        cases = quotecases.cases(docs, args.every)
        started = time.perf_counter()
        result = quotecases.tally(docs, cases)
        elapsed = time.perf_counter() - started
    checks = sum(len(listed) for listed in cases.values())
    print(f"papers: {len(docs)} ({', '.join(docs)})")
    print(f"sentences tried: {result.tried}; found on the right page: {result.right_page}")
    print(
        f"near misses (one word changed): {result.near_tried}; reported found: "
        f"{len(result.near_found)}; closest passage on the right page: {result.near_located}; "
        f"similarity min {min(result.near_similarity):.3f}, "
        f"median {statistics.median(result.near_similarity):.3f}"
    )
    print(
        f"other papers' sentences: {result.absent_tried}; reported found: "
        f"{len(result.absent_found)}"
    )
    print(f"false found in all: {len(result.near_found) + len(result.absent_found)}")
    print(f"{checks} checks in {elapsed:.1f} s ({1000 * elapsed / checks:.1f} ms each)")
    for miss in result.missed + result.near_found + result.absent_found:
        print("  wrong:", miss)


if __name__ == "__main__":
    main()
