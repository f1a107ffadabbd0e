"""The parts of importing that need no upstream: file fields as each citation manager
writes them, finding their files, telling formats apart, and which keys are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.cite.citekey import citable_key
from doiget.errors import DoigetError
from doiget.importing.files import locate
from doiget.importing.service import format_name
from doiget.verify.readers import bib_files, read_bibtex, read_csl, read_ris

FILE_FIELDS = {
    "Better BibTeX, one path": (
        "/home/ada/Zotero/storage/AB/Makris.pdf",
        ["/home/ada/Zotero/storage/AB/Makris.pdf"],
    ),
    "Better BibTeX, a PDF and a snapshot": (
        "/z/a.pdf;/z/snapshot.html",
        ["/z/a.pdf"],
    ),
    "Zotero, description:path:mime": (
        "Full Text PDF:/z/a.pdf:application/pdf;Snapshot:/z/s.html:text/html",
        ["/z/a.pdf"],
    ),
    "Zotero, escaped Windows path": (
        r"Full Text PDF:C\:\\Users\\ada\\a.pdf:application/pdf",
        ["C:\\Users\\ada\\a.pdf"],
    ),
    "Zotero, escaped ';' and ':' in a name": (
        r"Full Text:/z/a\;b\: c.pdf:application/pdf",
        ["/z/a;b: c.pdf"],
    ),
    "JabRef, relative with type PDF": (":papers/Adak2001.pdf:PDF", ["papers/Adak2001.pdf"]),
    "JabRef, two files": (":a.pdf:PDF;:notes.txt:Text;:b.PDF:", ["a.pdf", "b.PDF"]),
    "Mendeley, Unix path without its slash": (
        ":Users/ada/Documents/Mendeley Desktop/V - 2017 - A.pdf:pdf",
        ["Users/ada/Documents/Mendeley Desktop/V - 2017 - A.pdf"],
    ),
    "Mendeley, Windows path with $\\backslash$": (
        r":C$\backslash$:/Users/ada/Mendeley/a.pdf:pdf",
        ["C:/Users/ada/Mendeley/a.pdf"],
    ),
    "Paperpile, Drive-relative": (
        "All Papers/V/Vaswani et al. 2017 - Attention.pdf",
        ["All Papers/V/Vaswani et al. 2017 - Attention.pdf"],
    ),
    "a bare Windows path": (r"C:\Users\ada\a.pdf", ["C:\\Users\\ada\\a.pdf"]),
    "no PDF at all": ("Snapshot:/z/s.html:text/html", []),
    "empty": ("", []),
}


@pytest.mark.parametrize("name", list(FILE_FIELDS))
def test_file_fields_give_their_pdfs(name: str) -> None:
    field, paths = FILE_FIELDS[name]
    assert list(bib_files(field)) == paths


def test_a_bibtex_entry_carries_its_files_and_a_wrapped_author_list() -> None:
    [work] = read_bibtex(
        '@article{k,\n  author = "Vaswani, Ashish and\n\tShazeer, Noam AND Parmar, Niki",\n'
        '  title = "T",\n  file = ":a.pdf:PDF"\n}\n'
    )
    assert [a.family for a in work.authors] == ["Vaswani", "Shazeer", "Parmar"]
    assert work.files == ("a.pdf",)


def test_ris_keeps_every_l1_pdf() -> None:
    [work] = read_ris(
        "TY  - JOUR\nTI  - T\nL1  - file:///z/a%20b.pdf\nL1  - files/3/b.pdf\n"
        "L1  - files/3/snapshot.html\nER  - \n"
    )
    assert work.files == ("file:///z/a%20b.pdf", "files/3/b.pdf")


def test_csl_json_key_is_the_citation_key_else_the_id() -> None:
    assert read_csl({"id": "x", "citation-key": "smith2020", "title": "T"}).key == "smith2020"
    assert read_csl({"id": "ITEM-1", "title": "T"}).key == "ITEM-1"


def test_files_are_found_where_managers_point(tmp_path: Path) -> None:
    pdf = tmp_path / "a b.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    assert locate(str(pdf), Path("/elsewhere")) == pdf
    assert locate(pdf.as_uri(), Path("/elsewhere")) == pdf  # file: URL, %20 decoded
    assert locate("a b.pdf", tmp_path) == pdf  # relative to the bibliography
    assert locate(str(pdf).lstrip("/"), Path("/elsewhere")) == pdf  # Mendeley's
    assert locate("missing.pdf", tmp_path) is None
    assert locate(str(tmp_path), tmp_path) is None  # a folder is not a file


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("% Encoding: UTF-8\n\n@Article{k, title={T}}", "import.bib"),
        ("\ufeff\n@article{k,", "import.bib"),
        ("TY  - JOUR\nER  - \n", "import.ris"),
        ('  [{"id": "x"}]', "import.json"),
        ('{"id": "x"}', "import.json"),
    ],
)
def test_formats_are_told_by_content(text: str, name: str) -> None:
    assert format_name(text, "auto") == name


def test_free_text_is_no_export() -> None:
    with pytest.raises(DoigetError) as refused:
        format_name("Vaswani A. Attention is all you need. 2017.", "auto")
    assert "BibTeX, CSL-JSON or RIS" in refused.value.message


@pytest.mark.parametrize(
    ("key", "kept"),
    [
        ("vaswaniAttentionAllYou2017", True),
        ("Vaswani2017-ab", True),
        ("smith:2020/a", True),
        ("M\u00fcller2020", True),  # a letter BibTeX 8-bit and biber cite
        ("x" * 128, True),
        ("http://zotero.org/users/local/J/items/7F", False),
        ("has space", False),
        ("tab\there", False),
        ("nbsp\u00a0key", False),
        ("ideographic\u3000space", False),
        ("brace{", False),
        ("x" * 129, False),
        ("", False),
        (None, False),
        ("nul\x00key", False),
        ("esc\x1b[31mkey", False),
        ("del\x7fkey", False),
        ("bidi\u202ekey", False),
        ("isolate\u2066key", False),
        ("zero\u200bwidth", False),
        ("private\ue000use", False),
        ("line\u2028sep", False),
        *[(f"a{char}b", False) for char in ",{}()#%\"'=\\~"],
    ],
)
def test_only_keys_bibtex_can_cite_are_kept(key: str | None, kept: bool) -> None:
    assert (citable_key(key) is not None) is kept


def test_a_stored_key_bibtex_cannot_cite_is_never_used() -> None:
    from doiget.papers.store import aliases

    document = {"doiget": {"aliases": {"bib": ["evil\u202e", "nul\x00", "good2020"]}}}
    assert aliases(document, "bib") == ["good2020"]
