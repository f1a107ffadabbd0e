"""A Word draft's Zotero and Mendeley citations, read from the fields they insert.

A citation manager's plugin writes each citation as a field whose instruction is
``ADDIN ZOTERO_ITEM CSL_CITATION {json}`` (Zotero) or ``ADDIN CSL_CITATION {json}``
(Mendeley), and whose result is the citation as printed. Word splits the instruction
over as many runs as it likes (``w:instrText`` inside the runs between the
``w:fldChar`` marks begin, separate and end), or writes the field whole as a
``w:fldSimple``. The JSON's ``citationItems[].itemData`` are CSL-JSON items, so the
draft carries its own bibliography: each item is keyed by its URI (stable across the
document) or else its id.

The package is read with lxml from the zip (WordprocessingML is the spec;
python-docx hides fields), after :func:`doiget.web.scrape.ooxml.check_package` has
refused a package that inflates past its caps. A paragraph's number (1-based, in the
body's order) is its line. Citations in footnotes and endnotes (note styles) are
citations of the body sentence where the note's mark stands.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from doiget.claims.manuscripts.bibfiles import References
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript, Place
from doiget.claims.manuscripts.sentence import sentences_around
from doiget.claims.manuscripts.source import read_draft, within_bound
from doiget.contract import invalid
from doiget.errors import DoigetError
from doiget.verify.inputs import csl_checked

_W: Final = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_FIELD: Final = re.compile(r"^\s*ADDIN\s+(?:ZOTERO_ITEM\s+)?CSL_CITATION\b")
_OTHER_CITATION: Final = re.compile(r"^\s*ADDIN\s+(EN\.CITE|Mendeley Citation)", re.IGNORECASE)
_DOCUMENT: Final = "word/document.xml"
_NOTE_PARTS: Final = (("word/footnotes.xml", "footnote"), ("word/endnotes.xml", "endnote"))
_PARTS: Final = (_DOCUMENT, *(part for part, _ in _NOTE_PARTS))


@dataclass(slots=True)
class _Field:
    """A field being read: its instruction, and where its result starts in the
    paragraph's text (None before the separate mark)."""

    instruction: list[str] = field(default_factory=list)
    start: int | None = None


@dataclass(slots=True)
class _Paragraph:
    """A paragraph's visible text, its fields (instruction, result span) and the marks
    of its footnotes and endnotes (kind, id, offset)."""

    text: list[str] = field(default_factory=list)
    length: int = 0
    fields: list[tuple[str, int, int]] = field(default_factory=list)
    marks: list[tuple[str, str, int]] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.text.append(text)
        self.length += len(text)


def _read_paragraph(paragraph: Any) -> _Paragraph:
    """The text and fields of a ``w:p`` element, in document order."""
    read = _Paragraph()
    open_fields: list[_Field] = []
    simple_ends: list[tuple[Any, str, int]] = []
    for element in paragraph.iter():
        tag = element.tag
        while simple_ends and not _within(element, simple_ends[-1][0]):
            _, instruction, start = simple_ends.pop()
            read.fields.append((instruction, start, read.length))
        if tag == f"{_W}t":
            read.add(element.text or "")
        elif tag in (f"{_W}tab", f"{_W}br", f"{_W}cr"):
            read.add(" ")
        elif tag == f"{_W}instrText" and open_fields:
            open_fields[-1].instruction.append(element.text or "")
        elif tag == f"{_W}fldChar":
            kind = element.get(f"{_W}fldCharType")
            if kind == "begin":
                open_fields.append(_Field())
            elif kind == "separate" and open_fields:
                open_fields[-1].start = read.length
            elif kind == "end" and open_fields:
                done = open_fields.pop()
                start = read.length if done.start is None else done.start
                read.fields.append(("".join(done.instruction), start, read.length))
        elif tag in (f"{_W}footnoteReference", f"{_W}endnoteReference"):
            kind = tag.removeprefix(_W).removesuffix("Reference")
            read.marks.append((kind, element.get(f"{_W}id") or "", read.length))
        elif tag == f"{_W}fldSimple":
            simple_ends.append((element, element.get(f"{_W}instr") or "", read.length))
    for _, instruction, start in reversed(simple_ends):
        read.fields.append((instruction, start, read.length))
    return read


def _within(element: Any, ancestor: Any) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())


def _items(instruction: str, where: str) -> list[Mapping[str, Any]]:
    """The ``citationItems`` of a citation field's JSON."""
    at = instruction.find("{")
    try:
        data, _ = json.JSONDecoder().raw_decode(instruction[at:]) if at >= 0 else (None, 0)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, Mapping) or not isinstance(data.get("citationItems"), list):
        raise invalid(
            f"{where}: a citation field's data is not the JSON Zotero or Mendeley write; "
            "refresh the citations in the citation manager and save again."
        )
    return [item for item in data["citationItems"] if isinstance(item, Mapping)]


def _key(item: Mapping[str, Any]) -> str | None:
    """An item's key: its first URI, else its id (the item's data's, then its own)."""
    for name in ("uris", "uri"):
        uris = item.get(name)
        if isinstance(uris, list) and uris and isinstance(uris[0], str):
            return uris[0]
    data = item.get("itemData")
    for source in (data if isinstance(data, Mapping) else {}, item):
        if source.get("id") not in (None, ""):
            return str(source["id"])
    return None


def _cited(items: Iterable[Mapping[str, Any]], bibliography: References) -> tuple[str, ...]:
    """The keys of a field's items, each added to ``bibliography`` with its data."""
    keys: list[str] = []
    for item in items:
        key = _key(item)
        if key is None:
            continue
        keys.append(key)
        data = item.get("itemData")
        if isinstance(data, Mapping):
            bibliography.setdefault(key, Cited(key, dict(csl_checked(data, "a citation's item"))))
        else:
            bibliography.setdefault(
                key, Cited(key, None, missing="the citation field carries no data for this item")
            )
    return tuple(dict.fromkeys(keys))


def _parts(data: bytes, name: str) -> dict[str, bytes]:
    """The text parts of the Word package ``data`` (body, footnotes, endnotes: those
    it has), once its sizes are known safe."""
    from doiget.web.scrape.ooxml import check_package

    try:
        check_package("docx", data)
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            held = set(package.namelist())
            return {part: package.read(part) for part in _PARTS if part in held}
    except DoigetError as error:
        raise invalid(f"{name}: {error.message} Save it again from Word.") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise invalid(
            f"{name} is not a Word document (.docx) doiget can open; save it again as .docx."
        ) from None


def _root(xml: bytes, name: str, part: str) -> Any:
    """The parsed XML of a part (no entities resolved, no network, libxml2's depth cap)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        return etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as error:
        raise invalid(
            f"{name}: its part {part} is not well-formed XML (line {error.lineno}); save it "
            "again from Word."
        ) from None


@dataclass(slots=True)
class _Reader:
    """A Word draft's citations as they are read: each with its paragraph and offset,
    so a note's citations take their place at the note's mark in the body."""

    name: str
    found: list[tuple[int, int, Citation]] = field(default_factory=list)
    bibliography: References = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    others: int = 0

    def fields(self, paragraph: _Paragraph, where: str) -> list[tuple[int, int, tuple[str, ...]]]:
        """The citation fields of ``paragraph``: (start, end, keys), in order."""
        found: list[tuple[int, int, tuple[str, ...]]] = []
        for instruction, start, end in paragraph.fields:
            if _OTHER_CITATION.match(instruction):
                self.others += 1
            elif _FIELD.match(instruction):
                found.append((start, end, _cited(_items(instruction, where), self.bibliography)))
        return within_bound(sorted(found), len(self.found), self.notes, self.name)

    def add(self, number: int, text: str, found: list[tuple[int, int, tuple[str, ...]]]) -> None:
        """Citations of the body paragraph ``number`` (whose text is ``text``) at spans."""
        said = sentences_around(text, [(start, end) for start, end, _ in found])
        for (start, _, keys), (sentence, quotes) in zip(found, said, strict=True):
            citation = Citation(Place(self.name, number), sentence, keys, quotes)
            self.found.append((number, start, citation))


def read_docx(path: Path, within: Path | None = None) -> Manuscript:
    """The citations and bibliography of the Word draft at ``path``: the body's, then
    those of its footnotes and endnotes, placed at their marks in the body."""
    parts = _parts(read_draft(path, within=within), path.name)
    if _DOCUMENT not in parts:
        raise invalid(f"{path.name} has no document body; save it again from Word as .docx.")
    reader = _Reader(path.name)
    anchors: dict[tuple[str, str], tuple[int, int]] = {}
    texts: dict[int, str] = {}
    body = _root(parts[_DOCUMENT], path.name, _DOCUMENT).find(f"{_W}body")
    paragraphs = body.iter(f"{_W}p") if body is not None else iter(())
    for number, element in enumerate(paragraphs, start=1):
        paragraph = _read_paragraph(element)
        text = "".join(paragraph.text)
        for kind, note, offset in paragraph.marks:
            anchors[(kind, note)] = (number, offset)
            texts[number] = text
        found = reader.fields(paragraph, f"{path.name} paragraph {number}")
        if found:
            reader.add(number, text, found)
    for part, kind in _NOTE_PARTS:
        if part in parts:
            _read_notes(reader, _root(parts[part], path.name, part), kind, anchors, texts)
    if reader.others:
        reader.notes.append(
            f"{reader.others} citation field(s) of EndNote or an old Mendeley plugin were not "
            "read; convert them to Zotero or Mendeley Cite citations, or export the draft as "
            "text with its reference list."
        )
    reader.found.sort(key=lambda entry: entry[:2])
    citations = [citation for _, _, citation in reader.found]
    return Manuscript(path.name, "docx", citations, reader.bibliography, reader.notes)


def _read_notes(
    reader: _Reader,
    root: Any,
    kind: str,
    anchors: dict[tuple[str, str], tuple[int, int]],
    texts: dict[int, str],
) -> None:
    """The citations of each footnote or endnote (``kind``), as citations of the body
    sentence its mark stands in; a note no mark points to (a separator) is skipped."""
    for note in root.iter(f"{_W}{kind}"):
        anchor = anchors.get((kind, note.get(f"{_W}id") or ""))
        if anchor is None:
            continue
        number, offset = anchor
        where = f"{reader.name} {kind} {note.get(f'{_W}id')}"
        keys = [
            key
            for element in note.iter(f"{_W}p")
            for _, _, cited in reader.fields(_read_paragraph(element), where)
            for key in cited
        ]
        if keys:
            reader.add(number, texts[number], [(offset, offset, tuple(dict.fromkeys(keys)))])
