"""DOCX/PPTX packages are refused before they are inflated: peak memory stays flat.

Each case runs in a fresh interpreter, which reports its peak RSS after importing the
readers and after reading the bomb; the difference is what reading it cost.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# A 300 MB expansion: reading it whole would add at least that much.
_SCRIPT = """
import json, resource, sys
sys.path.insert(0, {tests!r})
import bombs
from doiget.web.failure import kind_of
from doiget.web.scrape.documents import extract_docx, extract_pptx
import docx, pptx
data = {build}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    {reader}(data)
    kind = None
except Exception as error:
    kind = str(kind_of(error))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"kind": kind, "grew_kib": after - before}}))
"""


@pytest.mark.parametrize(
    ("build", "reader"),
    [
        ("bombs.docx_bomb(300_000_000)", "extract_docx"),
        ("bombs.pptx_bomb(300_000_000)", "extract_pptx"),
        (
            "bombs.lying_sizes(bombs.docx_bomb(300_000_000), 'word/document.xml', 500_000)",
            "extract_docx",
        ),
    ],
    ids=["docx", "pptx", "lying-docx"],
)
def test_a_zip_bomb_is_refused_without_inflating_it(build: str, reader: str) -> None:
    script = _SCRIPT.format(tests=str(TESTS), build=build, reader=reader)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["kind"] == "too_large"
    assert report["grew_kib"] < 32 * 1024
