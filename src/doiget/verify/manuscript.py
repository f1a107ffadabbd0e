"""A PDF manuscript's reference list, cut into one text per reference.

The list starts after the last heading that is only "References", "Bibliography",
"Literature cited" or "Works cited" (numbered or not) and ends at an appendix
heading or the end. Entries start at a "[n]" or "n." marker when the list uses
them; otherwise a new entry starts where a line follows a full stop with an
author's family name and a comma.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from doiget.contract import invalid

_HEADING: Final = re.compile(
    r"^\s*(?:\d+\.?\s*|[A-Z]\.?\s+)?(?:references|bibliography|literature cited|works cited)\s*$",
    re.IGNORECASE,
)
_END: Final = re.compile(
    r"^\s*(?:[A-Z]\.?\s+)?(?:appendix|appendices|supplementary material)\b", re.IGNORECASE
)
_MARKER: Final = re.compile(r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.)\s+")
_AUTHOR_START: Final = re.compile(r"^[A-Z][\w'\u2019-]+(?: [A-Z][\w'\u2019-]+)?,")


def split_entries(lines: list[str]) -> list[str]:
    """The reference list's lines grouped into entries."""
    numbered = sum(bool(_MARKER.match(line)) for line in lines) >= max(2, len(lines) // 6)
    entries: list[list[str]] = []
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if numbered:
            starts = bool(_MARKER.match(text))
        else:
            previous = entries[-1][-1] if entries else ""
            starts = not entries or (previous.endswith(".") and bool(_AUTHOR_START.match(text)))
        if starts or not entries:
            entries.append([_MARKER.sub("", text) if numbered else text])
        else:
            last = entries[-1][-1]
            entries[-1][-1] = last[:-1] + text if last.endswith("-") else f"{last} {text}"
    return [" ".join(parts) for parts in entries]


def reference_list(path: Path) -> list[str]:
    """The references of the manuscript at ``path``, one text each."""
    from doiget.library.pdftext import UnusableDocument, read_pdf

    try:
        lines = [line.text for line in read_pdf(path).lines]
    except UnusableDocument as error:
        raise invalid(f"{error.message}.") from None
    starts = [index for index, line in enumerate(lines) if _HEADING.match(line)]
    if not starts:
        raise invalid(
            f"{path.name} has no References or Bibliography heading; pass the reference "
            "list as a .bib, .ris, .json or .txt file instead."
        )
    body = lines[starts[-1] + 1 :]
    end = next((index for index, line in enumerate(body) if _END.match(line)), len(body))
    return split_entries(body[:end])
