"""Syncing a 2,000-item Zotero library: cold, again unchanged, and after 20 items changed.

The library is the test suite's fake Zotero (``tests/zoterofake.py``, Zotero's own
response shapes) served as the Web API on the replay upstream, a local TLS server
that also answers the verifier's Crossref lookups from Crossref's recorded record
re-addressed to each generated work; ``--pdfs`` of the items carry a PDF attachment
(a small distinct PDF each). doiget reaches it through its real Zotero connection,
network, verifier, store and provenance log. Nothing leaves the machine; PDFs are
stored but not embedded (indexing is measured by ``index_throughput.py``).

    python benchmarks/zotero_sync.py                 # 2,000 items, 100 with a PDF
    python benchmarks/zotero_sync.py --items 500 --pdfs 20

Columns: requests to Zotero (as the fake counted them; the report's own count in
brackets), wall seconds, metadata entries written (TOML files new or changed),
provenance rows appended, PDFs added, and the items the report lists.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import anyio
from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "integration")]

from zoterosyncutil import route_generated, serve  # noqa: E402

from doiget.verify.lookup import AnswerStore  # noqa: E402
from doiget.verify.service import Verifier  # noqa: E402
from doiget.zotero.sync import open_sync  # noqa: E402
from doiget.zotero.sync_contracts import ZoteroSyncReport  # noqa: E402

from papersutil import make_papers  # noqa: E402
from pdfmaker import one_page_pdf  # noqa: E402
from replay import ReplayUpstream  # noqa: E402


def _sync(env: dict[str, str]) -> ZoteroSyncReport:
    async def run() -> ZoteroSyncReport:
        papers = make_papers(env)
        verifier = Verifier(
            papers.network, AnswerStore(Path(env["DOIGET_DATA_DIR"]) / "answers"), "b@example.org"
        )
        try:
            return await open_sync(papers, verifier).run()
        finally:
            await papers.network.aclose()
            await papers.aclose()

    return anyio.run(run)


def _entries(store: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (store / ".metadata").glob("*.toml")}


def _rows(log: Path) -> int:
    return len(log.read_bytes().splitlines()) if log.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--pdfs", type=int, default=100)
    parser.add_argument("--changed", type=int, default=20)
    args = parse_args(parser, items=20, pdfs=2, changed=2)
    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream() as upstream:
        upstream.start(Path(tmp))
        served = serve("web", Path(tmp) / "zotero", upstream)
        route_generated(upstream)
        fake = served.fake
        keys = fake.bulk(args.items)
        for number, key in enumerate(keys[: args.pdfs]):
            text = f"BT /F1 12 Tf 72 700 Td (Generated article {number} full text) Tj ET"
            fake.add_pdf(key, one_page_pdf(text.encode()), filename=f"{number}.pdf")
        env = {**upstream.isolated_env(Path(tmp) / "doiget"), **served.env}
        env["DOIGET_EMAIL"] = "bench@example.org"
        store, log = Path(env["DOIGET_STORE_ROOT"]), Path(env["DOIGET_LOG_PATH"])
        print(f"{args.items} items, {args.pdfs} with a PDF; Web API through the replay upstream")
        print("| run | requests to Zotero | seconds | entries written | log rows | PDFs added "
              "| items listed |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        runs = [("cold", None), ("unchanged", None), (f"{args.changed} changed", args.changed)]
        for name, changed in runs:
            if changed:
                for key in keys[-changed:]:
                    fake.change(key, tags=[{"tag": "revisited"}])
            before, rows, asked = _entries(store), _rows(log), served.zotero_requests()
            started = time.perf_counter()
            report = _sync(env)
            seconds = time.perf_counter() - started
            after = _entries(store)
            written = sum(1 for name_, data in after.items() if before.get(name_) != data)
            print(
                f"| {name} | {served.zotero_requests() - asked} ({report.requests}) | "
                f"{seconds:.1f} | {written} | {_rows(log) - rows} | "
                f"{report.counts.pdfs_added} | {len(report.results)} |"
            )
            assert not report.interrupted and report.counts.failed == 0, report.note


if __name__ == "__main__":
    main()
