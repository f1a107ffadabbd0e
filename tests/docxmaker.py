"""Word drafts for tests: paragraphs of text and raw runs, with citation fields whose
instruction text is split over many runs, as Word writes a long Zotero field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import docx
from docx.oxml import parse_xml

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def instruction(items: list[dict[str, Any]], zotero: bool = True) -> str:
    """A Zotero (or Mendeley) citation field's instruction text citing ``items``."""
    head = "ADDIN ZOTERO_ITEM CSL_CITATION " if zotero else "ADDIN CSL_CITATION "
    return head + json.dumps({"citationID": "x", "citationItems": items, "schema": "csl"})


def run(inner: str) -> str:
    return f"<w:r {W}>{inner}</w:r>"


def field_runs(instruction: str, result: str, pieces: int) -> list[str]:
    """A complex field: begin, the instruction split over ``pieces`` runs, separate,
    the result, end."""
    size = -(-len(instruction) // pieces)
    parts = [instruction[i : i + size] for i in range(0, len(instruction), size)]
    runs = [run('<w:fldChar w:fldCharType="begin"/>')]
    runs += [run(f'<w:instrText xml:space="preserve">{escape(p)}</w:instrText>') for p in parts]
    runs.append(run('<w:fldChar w:fldCharType="separate"/>'))
    runs.append(run(f'<w:t xml:space="preserve">{escape(result)}</w:t>'))
    runs.append(run('<w:fldChar w:fldCharType="end"/>'))
    return runs


def write_docx(path: Path, paragraphs: list[list[str | tuple[str, ...]]]) -> Path:
    """A .docx whose paragraphs are text pieces and raw XML runs (tuples)."""
    document = docx.Document()
    for pieces in paragraphs:
        paragraph = document.add_paragraph()
        for piece in pieces:
            if isinstance(piece, str):
                paragraph.add_run(piece)
            else:
                for xml in piece:
                    paragraph._p.append(parse_xml(xml))
    document.save(str(path))
    return path
