"""What reading a bomb costs: time and peak RSS per document or page built to expand.

Each case runs in a fresh interpreter that builds the bomb (tests/bombs.py), then reads
it with the reader scrape_page uses for its type (documents.extract_docx / extract_pptx,
html.extract_html) in-process, and reports the reading's wall time, CPU time and the
interpreter's peak RSS after reading (building is not counted in the times; the peak
includes the bomb's own bytes). Point ``--src`` at another checkout's ``src`` to measure
it the same way (e.g. the code before the caps), with ``--timeout`` bounding each case.

    python benchmarks/extraction_bombs.py
    python benchmarks/extraction_bombs.py --src /path/to/old/src --timeout 300
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
GIB = 1_000_000_000

CASES: dict[str, tuple[str, str]] = {
    "docx, 1 GB document.xml": ("bombs.docx_bomb(GIB)", "docx"),
    "docx, sizes that lie": (
        "bombs.lying_sizes(bombs.docx_bomb(GIB // 4), 'word/document.xml', 500_000)",
        "docx",
    ),
    "pptx, 1 GB slide": ("bombs.pptx_bomb(GIB)", "pptx"),
    "docx, 6,000 parts": ("bombs.docx_with_parts(6_000)", "docx"),
    "html, 5,000-column table (5 MB)": ("bombs.wide_table_html(5_000, 75)", "html"),
    "html, 500,000 elements (5 MB)": ("bombs.many_elements_html(500_000)", "html"),
    "html, 100,000 levels deep": ("bombs.deep_html(100_000)", "html"),
}

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {tests!r})
import bombs
from doiget.web.scrape.documents import extract_docx, extract_pptx
from doiget.web.scrape.html import extract_html
GIB = {gib}
data = {build}
readers = {{
    "docx": extract_docx,
    "pptx": extract_pptx,
    "html": lambda body: extract_html(body.decode(), "https://example.org/"),
}}
wall, cpu = time.perf_counter(), time.process_time()
try:
    readers[{reader!r}](data)
    outcome = "read"
except Exception as error:
    from doiget.web.failure import kind_of
    outcome = str(kind_of(error)) if hasattr(error, "code") else type(error).__name__
print(json.dumps({{
    "outcome": outcome,
    "wall": time.perf_counter() - wall,
    "cpu": time.process_time() - cpu,
    "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "bytes": len(data),
}}))
"""


def run(name: str, src: Path, timeout: float, gib: int) -> dict[str, object]:
    build, reader = CASES[name]
    script = _CHILD.format(tests=str(ROOT / "tests"), gib=gib, build=build, reader=reader)
    env = {**os.environ, "PYTHONPATH": str(src)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return {"outcome": f"> {timeout:.0f} s (stopped)"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"outcome": f"died ({done.returncode})"}
    report: dict[str, object] = json.loads(lines[-1])
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--gib", type=int, default=GIB, help="bytes a 1 GB bomb expands to")
    args = parse_args(parser, gib=1_000_000, timeout=60.0)
    print(f"{'bomb':34} {'body':>9} {'outcome':>22} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9}")
    for name in CASES:
        if args.gib != GIB and "GIB" not in CASES[name][0]:
            print(f"{name:34} skipped: its size does not follow --gib")
            continue
        report = run(name, args.src, args.timeout, args.gib)
        size = report.get("bytes")
        body = f"{int(size) / 1e6:.1f} MB" if isinstance(size, int) else "-"
        numbers = [report.get(key) for key in ("wall", "cpu", "peak_mib")]
        shown = [f"{value:.2f}" if isinstance(value, float) else "-" for value in numbers]
        print(
            f"{name:34} {body:>9} {report['outcome']!s:>22} {shown[0]:>7} {shown[1]:>7} "
            f"{shown[2]:>9}"
        )


if __name__ == "__main__":
    main()
