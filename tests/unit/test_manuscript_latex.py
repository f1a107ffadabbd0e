"""LaTeX drafts: every citation form, comments and verbatim text, includes kept inside
the draft's folder, braces that do not balance, and the bibliography by key."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from doiget.claims.manuscripts import read_manuscript
from doiget.claims.manuscripts.model import Manuscript
from doiget.errors import DoigetError, ErrorCode

BIB = """@article{smith2020,
  title = {Lake ice},
  author = {Smith, Jane},
  year = 2020
}
@string{jn = "Journal of Ice"}
@article{lee2019, title = {Snow}, journal = jn, year = 2019}
"""


def _read(tmp_path: Path, body: str, name: str = "main.tex", **files: str) -> Manuscript:
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (tmp_path / name).write_text(body)
    return read_manuscript(tmp_path / name)


def _keys(manuscript: Manuscript) -> list[tuple[str, ...]]:
    return [citation.keys for citation in manuscript.citations]


@pytest.mark.parametrize(
    ("command", "keys"),
    [
        (r"\cite{a}", ("a",)),
        (r"\citep{a, b}", ("a", "b")),
        (r"\citet*{a}", ("a",)),
        (r"\citealp[p.~3]{a}", ("a",)),
        (r"\citep[see][p.~3]{a,b}", ("a", "b")),
        (r"\parencite[{see [x]}][12]{a}", ("a",)),
        (r"\textcite{a}", ("a",)),
        (r"\Textcite{a}", ("a",)),
        (r"\autocite*{a}", ("a",)),
        (r"\footcite[e.g.][]{a}", ("a",)),
        (r"\cites(pre)(post)[see][4]{a}[p.~5]{b,c}", ("a", "b", "c")),
        (r"\parencites{a}{b}", ("a", "b")),
        ("\\citep\n  [see]\n  {a}", ("a",)),
    ],
)
def test_each_citation_form(tmp_path: Path, command: str, keys: tuple[str, ...]) -> None:
    manuscript = _read(tmp_path, f"Lake ice grows {command} in the cold.\n")
    assert _keys(manuscript) == [keys]
    assert manuscript.citations[0].sentence == "Lake ice grows in the cold."
    assert manuscript.citations[0].place.line == 1


def test_comments_verbatim_and_escaped_percent(tmp_path: Path) -> None:
    body = "\n".join(
        [
            r"% \cite{commented}",
            r"Costs fell 5\% \cite{real}. % and \cite{trailing}",
            r"A line break \\% \cite{after_break}",
            r"Mail me at jane@example.org or \verb|\cite{verb}|.",
            r"\begin{verbatim}",
            r"\cite{inside_verbatim}",
            r"\end{verbatim}",
            r"\begin{comment}\cite{inside_comment}\end{comment}",
            r"\newcommand{\mycite}[1]{\cite{#1}}",
            r"\nocite{*} \nocite{listed_only}",
            r"Last \citep{last}.",
        ]
    )
    manuscript = _read(tmp_path, body)
    assert _keys(manuscript) == [("real",), ("last",)]
    assert [c.place.line for c in manuscript.citations] == [2, 11]
    assert manuscript.citations[0].sentence == "Costs fell 5%."


def test_sentence_quotes_and_lines(tmp_path: Path) -> None:
    body = (
        "\\section{Intro}\n"
        "First sentence here. As \\citet{smith2020} showed, ``ice is thick'' and\n"
        '\\enquote{snow is "cold"} in winter. Next one \\cite{lee2019}.\n'
        "\n"
        "A new paragraph without citations.\n"
    )
    manuscript = _read(tmp_path, body)
    first, second = manuscript.citations
    assert first.place.line == 2
    assert first.sentence == 'As showed, “ice is thick” and “snow is "cold"” in winter.'
    assert first.quotes == ("ice is thick", 'snow is "cold"')
    assert second.place.line == 3
    assert second.sentence == "Next one."


def test_bibliography_files_and_missing_keys(tmp_path: Path) -> None:
    body = "Ice \\citep{smith2020,ghost}. Snow \\cite{lee2019}.\n\\bibliography{refs}\n"
    manuscript = _read(tmp_path, body, **{"refs.bib": BIB})
    assert list(manuscript.bibliography) == ["smith2020", "ghost", "lee2019"]
    smith = manuscript.bibliography["smith2020"].reference
    assert isinstance(smith, str) and smith.startswith("@article{smith2020,")
    assert "Journal of Ice" in str(manuscript.bibliography["lee2019"].reference)
    ghost = manuscript.bibliography["ghost"]
    assert ghost.reference is None and ghost.missing and "refs.bib" in ghost.missing


def test_addbibresource_and_a_missing_file_is_a_note(tmp_path: Path) -> None:
    body = (
        "\\addbibresource[label=x]{refs.bib}\n\\addbibresource{gone.bib}\n"
        "Ice \\autocite{smith2020}.\n"
    )
    manuscript = _read(tmp_path, body, **{"refs.bib": BIB})
    assert manuscript.bibliography["smith2020"].reference is not None
    assert any("gone.bib" in note for note in manuscript.notes)


def test_thebibliography_list(tmp_path: Path) -> None:
    body = (
        "Ice \\cite{a} and snow \\cite{b}.\n"
        "\\begin{thebibliography}{9}\n"
        "\\bibitem[Smith(2020)]{a} J.~Smith. \\emph{Lake ice}. Journal of Ice, 2020.\n"
        "\\bibitem{b} K. Lee, Snow, 2019.\n"
        "\\end{thebibliography}\n"
    )
    manuscript = _read(tmp_path, body)
    assert manuscript.bibliography["a"].reference == "J. Smith. Lake ice. Journal of Ice, 2020."
    assert manuscript.bibliography["b"].reference == "K. Lee, Snow, 2019."


def test_bib_argument_gives_the_bibliography(tmp_path: Path) -> None:
    (tmp_path / "mine.bib").write_text(BIB)
    (tmp_path / "main.tex").write_text("Ice \\cite{smith2020}.\n")
    manuscript = read_manuscript(tmp_path / "main.tex", bib=tmp_path / "mine.bib")
    assert manuscript.bibliography["smith2020"].reference is not None


def test_inputs_are_read_in_place_with_their_own_lines(tmp_path: Path) -> None:
    body = "Before \\cite{a}.\n\\input{sections/intro}\nAfter \\cite{c}.\n\\include{end.tex}\n"
    manuscript = _read(
        tmp_path,
        body,
        **{
            "sections/intro.tex": "% header\n\nInside \\cite{b}.\n\\input{sections/deeper}\n",
            "sections/deeper.tex": "Deeper \\cite{d}.\n",
            "end.tex": "The end \\cite{e}.\n",
        },
    )
    assert _keys(manuscript) == [("a",), ("b",), ("d",), ("c",), ("e",)]
    places = [(c.place.file, c.place.line) for c in manuscript.citations]
    assert places == [
        ("main.tex", 1),
        ("sections/intro.tex", 3),
        ("sections/deeper.tex", 1),
        ("main.tex", 3),
        ("end.tex", 1),
    ]


def _refused(tmp_path: Path, *words: str) -> str:
    with pytest.raises(DoigetError) as raised:
        read_manuscript(tmp_path / "draft" / "main.tex")
    assert raised.value.code is ErrorCode.INVALID_REF
    for word in words:
        assert word in raised.value.message
    return raised.value.message


@pytest.mark.parametrize(
    "target",
    ["../secret", "/etc/hostname", "sub/../../secret", "link_out"],
)
def test_an_include_leading_out_of_the_folder_is_refused(tmp_path: Path, target: str) -> None:
    (tmp_path / "secret.tex").write_text("Secret \\cite{leak}.\n")
    draft = tmp_path / "draft"
    (draft / "sub").mkdir(parents=True)
    os.symlink(tmp_path / "secret.tex", draft / "link_out.tex")
    (draft / "main.tex").write_text(f"Text.\n\n\\input{{{target}}}\n")
    message = _refused(tmp_path, "main.tex line 3")
    assert "leak" not in message


def test_an_include_cycle_is_refused(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text("\\input{a}\n")
    (draft / "a.tex").write_text("A.\n\\input{b}\n")
    (draft / "b.tex").write_text("B.\n\\input{main}\n")
    _refused(tmp_path, "b.tex line 2", "cycle")


def test_a_missing_include_is_refused_with_its_line(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text("One.\nTwo \\input{nowhere}\n")
    _refused(tmp_path, "main.tex line 2", "nowhere")


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("Fine {x}.\n\\textbf{open\nmore text \\cite{a}.\n\nlast.\n", 2),
        ("One.\nTwo.\nA } stray.\n", 3),
        ("\\begin{document}\n\\section{A}\n\\emph{x {y} z\n\\end{document}\n", 3),
        # Braces inside a comment, \verb and escaped braces do not count.
        ("% {\n\\verb|{|\n\\{ \\}\n{ unclosed here\n", 4),
    ],
)
def test_unbalanced_brace_names_its_line(tmp_path: Path, body: str, line: int) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text(body)
    _refused(tmp_path, f"main.tex line {line}")


def test_an_unbalanced_brace_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text("A.\n\\input{part}\n")
    (draft / "part.tex").write_text("x\ny\n\\cite{a\n")
    _refused(tmp_path, "part.tex line 3")


def test_inline_text_reads_no_file_it_names(tmp_path: Path) -> None:
    (tmp_path / "part.tex").write_text("Leaked \\cite{leak}.\n")
    (tmp_path / "refs.bib").write_text(BIB)
    text = "Ice \\cite{smith2020}.\n\\input{part}\n\\bibliography{refs}\n"
    manuscript = read_manuscript(tmp_path / "inline.tex", text=text)
    assert _keys(manuscript) == [("smith2020",)]
    assert manuscript.bibliography["smith2020"].reference is None
    assert any("part.tex was not read" in note for note in manuscript.notes)
    assert any("refs.bib was not read" in note for note in manuscript.notes)
    given = read_manuscript(tmp_path / "inline.tex", text=text, bib_text=BIB)
    assert given.bibliography["smith2020"].reference is not None


def test_a_draft_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.tex"
    with path.open("wb") as handle:
        handle.truncate(21 * 1024 * 1024)
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF


def test_includes_nested_too_deep_are_refused(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text("\\input{p1}\n")
    for depth in range(1, 20):
        (draft / f"p{depth}.tex").write_text(f"Level {depth}.\n\\input{{p{depth + 1}}}\n")
    _refused(tmp_path, "deeper than 16")


def test_included_files_share_the_draft_size_bound(tmp_path: Path) -> None:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "main.tex").write_text("Text \\cite{a}.\n\\input{half1}\n\\input{half2}\n")
    for name in ("half1.tex", "half2.tex"):
        with (draft / name).open("wb") as handle:
            handle.truncate(11 * 1024 * 1024)
    _refused(tmp_path, "main.tex line 3", "half2.tex", "20,971,520 bytes")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("A run " + "\\cite" * 400_000 + "{a}.\n", id="macro-run"),
        pytest.param("\\cite[" * 200_000 + "\n", id="open-notes"),
        pytest.param("\\cites(" * 200_000 + "\n", id="open-multi-notes"),
        pytest.param("x " + "{" * 100_000 + "\\cite{a}" + "}" * 100_000 + "\n", id="deep-braces"),
    ],
)
def test_hostile_source_reads_in_bounded_time(tmp_path: Path, body: str) -> None:
    """Arguments are matched in one pass and a long paragraph is read without
    pylatexenc: these took from 40 s to minutes read argument by argument and whole."""
    (tmp_path / "main.tex").write_text(body)
    started = time.perf_counter()
    read_manuscript(tmp_path / "main.tex")
    assert time.perf_counter() - started < 15
