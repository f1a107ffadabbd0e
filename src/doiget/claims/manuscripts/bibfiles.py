"""A draft's bibliography read into references by key: BibTeX (.bib), CSL-JSON (.json),
RIS (.ris), or CSL items written inline.

Each entry keeps the form the verifier reads (BibTeX text, RIS text, a CSL-JSON item),
so the audit checks it as ``doiget verify`` would. The BibTeX is read by the
verifier's bounded reader (:func:`doiget.verify.bibentries.bib_entries`), CSL-JSON by
its depth-checked reader, RIS by rispy. A key cited with no entry becomes a
:class:`Cited` with ``reference=None`` and the reason, never dropped.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from doiget.claims.manuscripts.model import Citation, Cited
from doiget.claims.manuscripts.source import decode, read_beside, why_unread
from doiget.contract import invalid
from doiget.errors import DoigetError
from doiget.verify.bibentries import BibEntry, bib_entries
from doiget.verify.inputs import csl_checked, csl_items, read_file

# Entries one bibliography may hold: a lab's shared .bib runs to a few thousand.
MAX_BIB_ENTRIES: Final = 20_000
MAX_BIB_BYTES: Final = 20 * 1024 * 1024
# Bibliography files one draft names: a thesis names a few, one per chapter at most.
MAX_BIB_FILES: Final = 100
SUFFIXES: Final = (".bib", ".json", ".ris")
_RIS_RECORD: Final = re.compile(r"^TY  - ", re.MULTILINE)
_RIS_ID: Final = re.compile(r"^ID  - [ \t]*(\S[^\r\n]*?)[ \t]*\r?$", re.MULTILINE)

References = dict[str, Cited]


def _bibtex(entry: BibEntry) -> str:
    """``entry`` written back as BibTeX (its macros expanded)."""
    fields = "".join(f",\n  {name} = {{{value}}}" for name, value in entry.fields.items())
    return f"@{entry.kind}{{{entry.key}{fields}\n}}\n"


def _from_bibtex(text: str, name: str) -> References:
    return {
        entry.key: Cited(entry.key, _bibtex(entry))
        for entry in bib_entries(text, MAX_BIB_ENTRIES, name)
        if entry.key
    }


def csl_references(items: Iterable[Any], name: str) -> References:
    """CSL-JSON items by their ``id`` (an item without one is not citable)."""
    found: References = {}
    for item in items:
        if isinstance(item, Mapping) and item.get("id") not in (None, ""):
            key = str(item["id"])
            found.setdefault(key, Cited(key, dict(csl_checked(item, name))))
    return found


def _from_ris(text: str, name: str) -> References:
    starts = [match.start() for match in _RIS_RECORD.finditer(text)]
    if len(starts) > MAX_BIB_ENTRIES:
        raise invalid(
            f"{name} holds {len(starts):,} RIS records, more than {MAX_BIB_ENTRIES:,}; "
            "export only the works the draft cites."
        )
    found: References = {}
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        record = text[start:end]
        key = _RIS_ID.search(record)
        if key is not None:
            found.setdefault(key.group(1), Cited(key.group(1), record))
    return found


def read_references(text: str, name: str) -> References:
    """The references of a bibliography's ``text``, its format told by ``name``'s suffix
    or, without one, by its content."""
    suffix = Path(name).suffix.lower()
    stripped = text.lstrip()
    if suffix == ".ris" or (suffix not in SUFFIXES and _RIS_RECORD.search(text)):
        return _from_ris(text, name)
    if suffix == ".json" or (suffix not in SUFFIXES and stripped[:1] in "[{"):
        return csl_references(csl_items(text, name), name)
    if suffix in ("", ".bib", ".bibtex") or stripped.startswith("@"):
        return _from_bibtex(text, name)
    raise invalid(
        f"{name} is not a bibliography doiget reads; pass a .bib, CSL-JSON (.json) or .ris file."
    )


def read_bibliography(path: Path) -> References:
    """The references of the bibliography file at ``path``."""
    data = read_file(path, MAX_BIB_BYTES, "a bibliography file of at most 20 MB")
    return read_references(decode(data, path.name), path.name)


def read_named(
    root: Path | None, names: Iterable[str], notes: list[str], within: Path | None = None
) -> References:
    """The references of the bibliography files a draft names (relative to its folder
    ``root``, and read only inside it and below ``within`` when given; none is read for
    a draft passed as text, without a folder); one that cannot be read is a note in
    ``notes`` and its keys are then missing, never a failure of the whole draft."""
    found: References = {}
    left = MAX_BIB_BYTES  # for all of them together: a name repeated is read once
    distinct = list(dict.fromkeys(names))
    if len(distinct) > MAX_BIB_FILES:
        notes.append(
            f"the draft names {len(distinct):,} bibliographies; the first {MAX_BIB_FILES} "
            "were read: merge them, or pass the bibliography with bib."
        )
    for name in distinct[:MAX_BIB_FILES]:
        if root is None:
            notes.append(
                f"the bibliography {name} was not read: the draft came as text, without its "
                "folder; pass the bibliography with it."
            )
            continue
        try:
            data = read_beside(root, root / name, left, within)
            left -= len(data)
            found.update(read_references(decode(data, name), name))
        except (OSError, ValueError) as error:
            reason = why_unread(error) if isinstance(error, OSError) else "not found"
            if isinstance(error, OSError) and error.errno == errno.EFBIG:
                reason = f"the bibliographies named hold more than {MAX_BIB_BYTES:,} bytes together"
            notes.append(f"the bibliography {name} was not read ({reason}); pass it with bib.")
        except DoigetError as error:
            notes.append(f"the bibliography {name} was not read: {error.message}")
    return found


def for_citations(
    citations: Iterable[Citation], references: References, missing: str
) -> References:
    """The entry of every key ``citations`` cite, in the order first cited; a key
    ``references`` lacks is kept as missing (``missing`` says why)."""
    found: References = {}
    for citation in citations:
        for key in citation.keys:
            if key not in found:
                found[key] = references.get(key) or Cited(key, None, missing=missing)
    return found
