"""How many local PDFs ``doiget add`` identifies, and how many it identifies wrongly.

Every PDF of tests/fixtures/pdf/ and the PDFs tests/integration/addpdfutil.py builds
(a DOI in the XMP packet, in the Info dictionary or printed on the page, an arXiv
stamp in the margin, title and authors only, and the traps: a page that prints only a
cited work's DOI, a stamp or a metadata DOI of another work, a work no source holds)
are added one by one, each to a fresh library, through the replay upstream. A PDF is
identified wrongly when it gets a ref other than the one expected, or any ref when it
should stay unidentified. Prints the table the README shows; the target for wrong is 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import anyio
from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "integration")]

from addpdfutil import Case, built_cases, fixture_cases, route_sources  # noqa: E402

from doiget.papers.adding import PdfAdder  # noqa: E402
from doiget.papers.service import Papers  # noqa: E402
from doiget.runtime import load_runtime  # noqa: E402
from doiget.verify.service import Verifier  # noqa: E402

from replay import ReplayUpstream  # noqa: E402


def _identify(env: dict[str, str], case: Case) -> str | None:
    async def run() -> str | None:
        runtime = load_runtime(env)
        papers = Papers(runtime)
        try:
            row = await PdfAdder(papers, Verifier.of(runtime)).add_pdf(case.path)
        finally:
            await papers.aclose()
            await runtime.aclose()
        return row.ref if row.identified else None

    return anyio.run(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=None, help="the first N of each group")
    args = parse_args(parser, cases=2)
    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream() as upstream:
        work = Path(tmp)
        upstream.start(work)
        route_sources(upstream)
        groups = {
            "fixture PDFs": fixture_cases()[: args.cases],
            "built PDFs": built_cases(work / "built")[: args.cases],
        }
        print("| PDFs | count | should identify | identified | identified wrongly |")
        print("|---|---|---|---|---|")
        totals = [0, 0, 0, 0]
        for label, cases in groups.items():
            expected = identified = wrong = 0
            for number, case in enumerate(cases):
                env = upstream.isolated_env(work / f"{label[:3]}{number}")
                got = _identify(env, case)
                want = case.expected.removeprefix("arxiv:") if case.expected else None
                expected += want is not None
                identified += got is not None and got == want
                wrong += got is not None and got != want
                print(f"  {case.name}: expected {want}, got {got}", file=sys.stderr)
            row = [len(cases), expected, identified, wrong]
            totals = [a + b for a, b in zip(totals, row, strict=True)]
            print(f"| {label} | " + " | ".join(map(str, row)) + " |")
        print("| all | " + " | ".join(map(str, totals)) + " |")
        count, should, right, wrong = totals
        share = f"{right / count:.0%} of all {count}"
        print(f"\nidentified {right}/{should} that carry a findable identity ({share}); "
              f"wrongly identified {wrong}/{count}")  # fmt: skip


if __name__ == "__main__":
    main()
