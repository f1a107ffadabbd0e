"""References as they arrive: one tool input item, or a whole file (BibTeX, CSL-JSON,
RIS, free text one reference per paragraph, or a PDF manuscript's reference list)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from doiget.contract import invalid
from doiget.verify.cited import CitedWork
from doiget.verify.freetext import read_free_text
from doiget.verify.readers import read_bibtex, read_csl, read_ris

_RIS_TAG: Final = re.compile(r"^TY  - ", re.MULTILINE)
_PARAGRAPH: Final = re.compile(r"\n\s*\n")


def read_item(item: str | Mapping[str, Any]) -> CitedWork:
    """One reference of a tool call: a CSL-JSON object, or a string holding a BibTeX
    entry, an RIS record, a CSL-JSON object or free text."""
    if isinstance(item, Mapping):
        return read_csl(item)
    text = item.strip()
    works: list[CitedWork] = []
    if text.startswith("@"):
        works = read_bibtex(text)
    elif _RIS_TAG.search(text):
        works = read_ris(text)
    elif text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return read_csl(data)
    return works[0] if works else read_free_text(text)


def read_text(text: str, name: str = "") -> list[CitedWork]:
    """Every reference of a document's text, its format told by its name or content."""
    suffix = Path(name).suffix.lower()
    stripped = text.lstrip()
    if suffix == ".bib" or (not suffix and stripped.startswith("@")):
        return read_bibtex(text)
    if suffix == ".ris" or (not suffix and _RIS_TAG.search(text)):
        return read_ris(text)
    if suffix == ".json" or (not suffix and stripped[:1] in "[{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise invalid(f"{name or 'the input'} is not valid CSL-JSON: {exc}.") from None
        items = data if isinstance(data, list) else [data]
        return [read_csl(item) for item in items if isinstance(item, Mapping)]
    return [read_free_text(part) for part in _PARAGRAPH.split(text) if part.strip()]


def read_path(path: Path) -> list[CitedWork]:
    """Every reference of a file; a PDF's come from its reference list."""
    if path.suffix.lower() == ".pdf":
        from doiget.verify.manuscript import reference_list

        return [read_free_text(entry) for entry in reference_list(path)]
    return read_text(path.read_text(encoding="utf-8"), path.name)
