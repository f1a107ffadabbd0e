"""Pairs of renderings compared: doiget's formatter against citeproc-js on the corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import citeprocjs_runner
from cslcorpus import STYLES
from doiget.cite.formatted import _item, render
from doiget.cite.styles import load_style, resolve_locale
from doiget.models import Work

Pair = tuple[str, int, str, str | None, str | None]  # style, work, kind, doiget, citeproc-js


def pairs(works: list[Work], module: Path, styles: tuple[str, ...] = STYLES) -> Iterator[Pair]:
    """Every (style, work, bibliography entry or citation) with both renderings."""
    items = [_item(work, index) for index, work in enumerate(works)]
    for style_id in styles:
        style = load_style(style_id)
        locale = resolve_locale(None, style)
        ours = render(works, style, locale)
        theirs = citeprocjs_runner.render(module, items, style, locale)
        entries = dict(ours.entries)
        for index in range(len(works)):
            key = f"item{index}"
            yield style_id, index, "entry", entries.get(index), theirs["entries"].get(key)
            yield style_id, index, "citation", ours.citations[index], theirs["citations"][key]
