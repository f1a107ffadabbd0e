"""Pandoc Markdown drafts: every citation form, code and e-mail addresses that are not
citations, front matter lines counted, and bibliographies in each format."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from doiget.claims.manuscripts import read_manuscript
from doiget.claims.manuscripts.model import Manuscript
from doiget.errors import DoigetError, ErrorCode

RIS = """TY  - JOUR
ID  - smith2020
TI  - Lake ice
AU  - Smith, Jane
PY  - 2020
ER  -

TY  - JOUR
ID  - lee2019
TI  - Snow
PY  - 2019
ER  -
"""
BIB = "@article{smith2020, title = {Lake ice}, year = 2020}\n"
CSL = [{"id": "smith2020", "type": "article-journal", "title": "Lake ice"}]


def _read(tmp_path: Path, text: str, **files: str) -> Manuscript:
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    (tmp_path / "draft.md").write_text(text)
    return read_manuscript(tmp_path / "draft.md")


@pytest.mark.parametrize(
    ("written", "keys"),
    [
        ("[@smith2020]", ("smith2020",)),
        ("[see @a, p. 3; @b]", ("a", "b")),
        ("[-@a]", ("a",)),
        ("[@a; @b; @c, chap. 2]", ("a", "b", "c")),
        ("[@doe:2020.x/y_z-1]", ("doe:2020.x/y_z-1",)),
        ("[@{Odd Key, 2020}]", ("Odd Key, 2020",)),
        ("[see\n@a]", ("a",)),
    ],
)
def test_bracketed_citations(tmp_path: Path, written: str, keys: tuple[str, ...]) -> None:
    manuscript = _read(tmp_path, f"Lake ice grows {written} in the cold.\n")
    assert [c.keys for c in manuscript.citations] == [keys]
    assert manuscript.citations[0].sentence == "Lake ice grows in the cold."


@pytest.mark.parametrize(
    ("text", "keys", "sentence"),
    [
        ("As @smith2020 [p. 4] says, ice grows.", ("smith2020",), "As says, ice grows."),
        ("As @smith2020 says, ice grows.", ("smith2020",), "As says, ice grows."),
        ("Ice grows, said @a.", ("a",), "Ice grows, said."),
        ("Keys end before punctuation: @a.b.", ("a.b",), "Keys end before punctuation:."),
    ],
)
def test_in_text_citations(tmp_path: Path, text: str, keys: tuple[str, ...], sentence: str) -> None:
    manuscript = _read(tmp_path, text + "\n")
    assert [c.keys for c in manuscript.citations] == [keys]
    assert manuscript.citations[0].sentence == sentence


@pytest.mark.parametrize(
    "text",
    [
        "Write to me@example.org for data.",
        "Write to [me@example.org] for data.",
        "Code `[@inline]` is not a citation.",
        "Code ``a ` [@double] b`` is not one either.",
        "```\n[@fenced]\n```",
        "~~~python\nx = '@fenced'\n~~~",
        "Indented:\n\n    [@indented]",
        "<div>\n[@html]\n</div>",
        "A [link @a](https://example.org) and [@b](https://example.org).",
        "Escaped \\@a is text.",
    ],
)
def test_not_citations(tmp_path: Path, text: str) -> None:
    assert _read(tmp_path, text + "\n").citations == []


def test_front_matter_lines_are_counted(tmp_path: Path) -> None:
    text = (
        "---\n"
        "title: Ice\n"
        "bibliography: refs.json\n"
        "---\n"
        "\n"
        "# Intro with [@h]\n"
        "\n"
        '> Quoted "ice is thick" [@q]\n'
        "\n"
        "- item one\n"
        "- item two [see @a,\n"
        "  p. 3; @b] end.\n"
        "\n"
        "| a | b |\n"
        "|---|---|\n"
        "| x [@t] | y |\n"
    )
    manuscript = _read(tmp_path, text, **{"refs.json": json.dumps(CSL)})
    places = [(c.keys, c.place.line) for c in manuscript.citations]
    assert places == [(("h",), 6), (("q",), 8), (("a", "b"), 11), (("t",), 16)]
    assert manuscript.citations[1].quotes == ("ice is thick",)


@pytest.mark.parametrize(
    ("files", "front"),
    [
        ({"refs.bib": BIB}, "bibliography: refs.bib"),
        ({"refs.json": json.dumps(CSL)}, "bibliography: refs.json"),
        ({"refs.ris": RIS}, "bibliography: refs.ris"),
        ({"a.bib": BIB, "b.ris": RIS}, "bibliography:\n  - a.bib\n  - b.ris"),
        ({}, "references:\n  - id: smith2020\n    title: Lake ice\n    type: article-journal"),
    ],
)
def test_bibliography_formats(tmp_path: Path, files: dict[str, str], front: str) -> None:
    text = f"---\n{front}\n---\nIce [@smith2020; @ghost].\n"
    manuscript = _read(tmp_path, text, **files)
    found = manuscript.bibliography["smith2020"].reference
    assert found is not None and "Lake ice" in str(found)
    assert manuscript.bibliography["ghost"].reference is None
    assert manuscript.bibliography["ghost"].missing


def test_ris_record_is_kept_whole(tmp_path: Path) -> None:
    manuscript = _read(
        tmp_path, "---\nbibliography: r.ris\n---\nSnow [@lee2019].\n", **{"r.ris": RIS}
    )
    reference = manuscript.bibliography["lee2019"].reference
    assert isinstance(reference, str)
    assert reference.startswith("TY  - JOUR") and "TI  - Snow" in reference
    assert "Lake ice" not in reference


def test_bib_argument_and_no_bibliography(tmp_path: Path) -> None:
    (tmp_path / "draft.md").write_text("Ice [@smith2020].\n")
    (tmp_path / "given.ris").write_text(RIS)
    given = read_manuscript(tmp_path / "draft.md", bib=tmp_path / "given.ris")
    assert given.bibliography["smith2020"].reference is not None
    alone = read_manuscript(tmp_path / "draft.md")
    assert "no bibliography" in str(alone.bibliography["smith2020"].missing)


def test_bibliography_outside_the_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.bib").write_text(BIB)
    draft = tmp_path / "d"
    draft.mkdir()
    (draft / "draft.md").write_text("---\nbibliography: ../outside.bib\n---\nIce [@smith2020].\n")
    manuscript = read_manuscript(draft / "draft.md")
    assert manuscript.bibliography["smith2020"].reference is None
    assert any("outside.bib" in note for note in manuscript.notes)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ntitle: [unclosed\n---\nBody.\n", "line 3"),
        ("---\na: &x [1]\nb: *x\n---\nBody.\n", "line 3"),
        ("---\ntitle: never closed\n\nBody [@a].\n", "line 1"),
    ],
)
def test_front_matter_that_cannot_be_read_names_its_line(
    tmp_path: Path, text: str, line: str
) -> None:
    with pytest.raises(DoigetError) as raised:
        _read(tmp_path, text)
    assert raised.value.code is ErrorCode.INVALID_REF
    assert line in raised.value.message


def test_inline_text(tmp_path: Path) -> None:
    manuscript = read_manuscript(
        tmp_path / "x.md", text="Ice [@a].\n", bib_text="@article{a, title={T}}\n"
    )
    assert manuscript.bibliography["a"].reference is not None
    (tmp_path / "refs.bib").write_text(BIB)
    named = read_manuscript(
        tmp_path / "x.md", text="---\nbibliography: refs.bib\n---\n[@smith2020]\n"
    )
    assert named.bibliography["smith2020"].reference is None
    assert any("refs.bib was not read" in note for note in named.notes)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 400_000 + "@a" + "]" * 400_000 + "\n", id="bracket-run"),
        pytest.param("---\na: " + "[" * 50_000 + "]" * 50_000 + "\n---\nx\n", id="deep-yaml"),
        pytest.param(">" * 100_000 + " x [@a]\n", id="deep-quotes"),
    ],
)
def test_hostile_draft_reads_in_bounded_time(tmp_path: Path, text: str) -> None:
    """Only blocks are parsed (inline links take time quadratic in a run of brackets)
    and YAML deeper than CSL-JSON is refused before PyYAML recurses: these took from
    40 s to minutes, or overflowed the stack."""
    (tmp_path / "draft.md").write_text(text)
    started = time.perf_counter()
    try:
        read_manuscript(tmp_path / "draft.md")
    except DoigetError as error:
        assert error.code is ErrorCode.INVALID_REF
    assert time.perf_counter() - started < 15
