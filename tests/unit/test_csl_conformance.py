"""doiget's formatted references against citeproc-js, the CSL reference implementation:
30 stored works of every type in 7 styles, entry and in-text citation, the same text.

citeproc-js is installed with npm (see tests/citeprocjs_runner.py). Without a registry
the test skips, saying why; in CI (CI=true) it fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import citeprocjs_runner
from cslcompare import pairs
from cslcorpus import STYLES, WORKS, store_corpus
from npmpackage import Unavailable

# Where the two still differ, and why (each found, none a wrong reference):
KNOWN: dict[tuple[str, int, str], str] = {
    # citeproc-js keeps a lone lowercase letter lowercase in title case ("Letter e").
    ("modern-language-association", 18, "entry"): "title case of a one-letter word",
    ("chicago-author-date", 18, "entry"): "title case of a one-letter word",
    # citeproc-js spells out given names of two same-family authors in the
    # bibliography (givenname disambiguation across the list); citeproc-py does not.
    ("harvard-cite-them-right", 19, "entry"): "given-name disambiguation in the list",
}


@pytest.fixture(scope="module")
def citeproc_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return citeprocjs_runner.module_path(tmp_path_factory.mktemp("citeproc-js"))
    except Unavailable as why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"citeproc-js is required in CI: {why}")
        pytest.skip(f"citeproc-js unavailable: {why}")


def test_the_corpus_covers_every_stored_type_and_the_edge_cases() -> None:
    types = {work.type for work in WORKS}
    assert {"article-journal", "paper-conference", "article", "book", "chapter"} <= types
    assert {"thesis", "report", "dataset", "webpage", None} <= types
    assert len(WORKS) == 30
    assert any(len(work.authors) > 20 for work in WORKS)
    assert any(not work.authors for work in WORKS)
    assert any(author.literal for work in WORKS for author in work.authors)
    assert any(work.year is None for work in WORKS)
    assert any((author.family or "").startswith("van ") for w in WORKS for author in w.authors)


def test_every_style_gives_citeproc_js_text(tmp_path: Path, citeproc_js: Path) -> None:
    works = store_corpus(tmp_path / "papers")
    compared = list(pairs(works, citeproc_js))
    assert len(compared) == 30 * len(STYLES) * 2
    differing = {(s, i, kind): (ours, theirs) for s, i, kind, ours, theirs in compared}
    differing = {key: value for key, value in differing.items() if value[0] != value[1]}
    unexpected = {key: value for key, value in differing.items() if key not in KNOWN}
    assert not unexpected, unexpected
    equal = len(compared) - len(differing)
    print(f"citeproc-js pairs equal: {equal} / {len(compared)}")
    assert equal >= 417
