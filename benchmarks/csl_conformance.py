"""doiget's formatted references against citeproc-js (the CSL reference implementation):
30 stored works of every type in 7 styles, bibliography entry and in-text citation,
counted as pairs of equal text. ``--unfixed`` renders with citeproc-py as released
(its plain-text formatter, no fixes) for the number before the fixes.

Needs node and npm (citeproc-js is installed as the test does: $DOIGET_CITEPROC_JS, else
a temporary folder).

    python benchmarks/csl_conformance.py
    python benchmarks/csl_conformance.py --unfixed --show
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from smoke import parse_args

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import citeprocjs_runner  # noqa: E402
from cslcompare import pairs  # noqa: E402
from cslcorpus import STYLES, store_corpus  # noqa: E402
from doiget.cite.formatted import render  # noqa: E402
from doiget.cite.styles import load_style, resolve_locale  # noqa: E402


def unfixed_render(works: list[Any], style: Any, locale: str, *_: Any) -> Any:
    """citeproc-py as released: plain formatter, CSL items as doiget exports them."""
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    from doiget.cite.formatted import Rendered, _item

    items = [_item(work, index) for index, work in enumerate(works)]
    parsed = CitationStylesStyle(str(style.path), locale=locale, validate=False)
    bib = CitationStylesBibliography(parsed, CiteProcJSON(items), formatter.plain)
    cites = [Citation([CitationItem(item["id"])]) for item in items]
    for cite in cites:
        bib.register(cite)
    texts = [str(bib.cite(cite, lambda _: None)) for cite in cites]
    bib.sort()
    keys = [item["id"] for item in items]
    entries = [(keys.index(k), str(t)) for k, t in zip(bib.keys, bib.bibliography(), strict=True)]
    return Rendered(entries, texts, "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unfixed", action="store_true", help="citeproc-py without fixes")
    parser.add_argument("--show", action="store_true", help="print each differing pair")
    args = parse_args(parser)
    if args.unfixed:
        import cslcompare

        cslcompare.render = unfixed_render  # type: ignore[assignment]
    styles = STYLES[:1] if args.smoke else STYLES
    with tempfile.TemporaryDirectory() as scratch:
        works = store_corpus(Path(scratch) / "papers")
        if args.smoke and "DOIGET_CITEPROC_JS" not in os.environ:
            # Installing citeproc-js takes the network: render doiget's side only.
            style = load_style(styles[0])
            rendered = render(works, style, resolve_locale(None, style))
            print(
                f"{styles[0]}: doiget rendered {len(rendered.citations)} citations; citeproc-js "
                "not compared (set DOIGET_CITEPROC_JS to an installed copy)"
            )
            return
        module = citeprocjs_runner.module_path(Path(scratch) / "citeproc-js")
        by_style: dict[str, list[int]] = {style: [0, 0] for style in styles}
        for style, index, kind, ours, theirs in pairs(works, module, styles):
            by_style[style][1] += 1
            if ours == theirs:
                by_style[style][0] += 1
            elif args.show:
                print(
                    f"{style} work {index} {kind}\n  doiget:      {ours}\n  citeproc-js: {theirs}"
                )
    for style, (equal, total) in by_style.items():
        print(f"{style:32} {equal:3} / {total}")
    equal = sum(counts[0] for counts in by_style.values())
    total = sum(counts[1] for counts in by_style.values())
    label = "citeproc-py unfixed" if args.unfixed else "doiget"
    print(f"{label}: pairs equal {equal} / {total}")


if __name__ == "__main__":
    main()
