"""Word drafts: Zotero and Mendeley citation fields, however Word splits them."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest

import bombs
from docxmaker import W
from docxmaker import field_runs as _field_runs
from docxmaker import instruction as _instruction
from docxmaker import run as _run
from docxmaker import write_docx as _write
from doiget.claims.manuscripts import read_manuscript
from doiget.errors import DoigetError, ErrorCode


def _item(uri: str | None, item_id: Any, title: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": item_id,
        "itemData": {"id": item_id, "type": "article-journal", "title": title},
    }
    if uri is not None:
        item["uris"] = [uri]
    return item


def _simple(instruction: str, result: str) -> str:
    return (
        f'<w:fldSimple {W} w:instr="{escape(instruction, {chr(34): "&quot;"})}">'
        f"{_run(f'<w:t>{escape(result)}</w:t>')}</w:fldSimple>"
    )


def test_zotero_field_split_over_five_runs(tmp_path: Path) -> None:
    instruction = _instruction(
        [
            _item("http://zotero.org/users/1/items/AAA", 11, "Ice grows"),
            _item("http://zotero.org/users/1/items/BBB", 12, "Snow falls"),
        ]
    )
    path = _write(
        tmp_path / "draft.docx",
        [
            ["A title"],
            [
                "Lake ice thickens in winter ",
                tuple(_field_runs(instruction, "(Smith 2020; Lee 2019)", 5)),
                ". Then it melts.",
            ],
        ],
    )
    manuscript = read_manuscript(path)
    assert manuscript.format == "docx"
    [citation] = manuscript.citations
    assert citation.keys == (
        "http://zotero.org/users/1/items/AAA",
        "http://zotero.org/users/1/items/BBB",
    )
    assert citation.place.line == 2
    assert citation.sentence == "Lake ice thickens in winter."
    first = manuscript.bibliography["http://zotero.org/users/1/items/AAA"]
    assert isinstance(first.reference, dict)
    assert first.reference["title"] == "Ice grows"


def test_mendeley_field_and_a_simple_field_in_one_paragraph(tmp_path: Path) -> None:
    mendeley = _instruction([_item(None, "ITEM-1", "Rivers run")], zotero=False)
    zotero = _instruction([_item("http://zotero.org/users/1/items/CCC", 3, "Seas rise")])
    path = _write(
        tmp_path / "draft.docx",
        [
            [
                "Rivers “run fast” ",
                tuple(_field_runs(mendeley, "[1]", 7)),
                ". Seas rise ",
                (_simple(zotero, "[2]"),),
                ".",
            ]
        ],
    )
    manuscript = read_manuscript(path)
    assert [c.keys for c in manuscript.citations] == [
        ("ITEM-1",),
        ("http://zotero.org/users/1/items/CCC",),
    ]
    assert [c.sentence for c in manuscript.citations] == ["Rivers “run fast”.", "Seas rise."]
    assert manuscript.citations[0].quotes == ("run fast",)
    assert manuscript.bibliography["ITEM-1"].reference == {
        "id": "ITEM-1",
        "type": "article-journal",
        "title": "Rivers run",
    }


def test_other_fields_are_not_citations(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "draft.docx",
        [
            ["Page ", tuple(_field_runs(" PAGE ", "3", 2)), " of the text."],
            ["See ", tuple(_field_runs("ADDIN EN.CITE <EndNote/>", "(X 2000)", 3)), "."],
        ],
    )
    manuscript = read_manuscript(path)
    assert manuscript.citations == []
    assert "EndNote" in manuscript.notes[0]


def test_an_item_without_data_is_missing_not_dropped(tmp_path: Path) -> None:
    instruction = _instruction([{"id": 5, "uris": ["http://zotero.org/users/1/items/DDD"]}])
    path = _write(tmp_path / "d.docx", [["Text ", tuple(_field_runs(instruction, "(D)", 3)), "."]])
    manuscript = read_manuscript(path)
    cited = manuscript.bibliography["http://zotero.org/users/1/items/DDD"]
    assert cited.reference is None and cited.missing


def test_broken_field_json_names_the_paragraph(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "d.docx",
        [["one"], ["Text ", tuple(_field_runs("ADDIN CSL_CITATION {not json", "(D)", 2)), "."]],
    )
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF
    assert "paragraph 2" in raised.value.message


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.docx"
    path.write_bytes(b"plain text, not a package")
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF


@pytest.mark.parametrize(
    "package",
    [
        pytest.param(lambda: bombs.docx_bomb(300 * 1024 * 1024), id="declared-300MB"),
        pytest.param(
            lambda: bombs.lying_sizes(bombs.docx_bomb(80 * 1024 * 1024), "word/document.xml", 1000),
            id="sizes-that-lie",
        ),
    ],
)
def test_zip_bomb_is_refused_before_inflating(tmp_path: Path, package: Any) -> None:
    path = tmp_path / "bomb.docx"
    path.write_bytes(package())
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF
    assert "zip bomb" in raised.value.message


def _with_part(path: Path, part: str, xml: str) -> None:
    """Add ``part`` to the package at ``path`` (the reader reads parts by name)."""
    with zipfile.ZipFile(path, "a") as package:
        package.writestr(part, xml)


def _notes(kind: str, notes: dict[str, list[str | tuple[str, ...]]]) -> str:
    body = "".join(
        f'<w:{kind} w:id="{number}"><w:p>'
        + "".join(
            _run(f'<w:t xml:space="preserve">{escape(piece)}</w:t>')
            if isinstance(piece, str)
            else "".join(piece)
            for piece in pieces
        )
        + f"</w:p></w:{kind}>"
        for number, pieces in notes.items()
    )
    separator = f'<w:{kind} w:id="0"><w:p/></w:{kind}>'
    return f'<?xml version="1.0"?><w:{kind}s {W}>{separator}{body}</w:{kind}s>'


def test_citations_in_footnotes_and_endnotes_stand_at_their_marks(tmp_path: Path) -> None:
    foot = _instruction([_item("http://zotero.org/users/1/items/FFF", 1, "Foot work")])
    end = _instruction([_item(None, "ITEM-9", "End work")], zotero=False)
    body = _instruction([_item("http://zotero.org/users/1/items/BBB", 2, "Body work")])
    path = _write(
        tmp_path / "notes.docx",
        [
            ["Intro paragraph."],
            [
                "Lake ice thickens in winter.",
                (_run('<w:footnoteReference w:id="2"/>'),),
                " Snow insulates it ",
                tuple(_field_runs(body, "(B)", 2)),
                ". Rivers freeze last.",
                (_run('<w:endnoteReference w:id="3"/>'),),
            ],
        ],
    )
    _with_part(
        path,
        "word/footnotes.xml",
        _notes("footnote", {"2": ["See ", tuple(_field_runs(foot, "F.", 5)), "."]}),
    )
    _with_part(
        path, "word/endnotes.xml", _notes("endnote", {"3": [tuple(_field_runs(end, "E.", 3))]})
    )
    manuscript = read_manuscript(path)
    got = [(c.keys, c.place.line, c.sentence) for c in manuscript.citations]
    assert got == [
        (("http://zotero.org/users/1/items/FFF",), 2, "Lake ice thickens in winter."),
        (("http://zotero.org/users/1/items/BBB",), 2, "Snow insulates it."),
        (("ITEM-9",), 2, "Rivers freeze last."),
    ]
    assert manuscript.bibliography["ITEM-9"].reference == {
        "id": "ITEM-9",
        "type": "article-journal",
        "title": "End work",
    }
