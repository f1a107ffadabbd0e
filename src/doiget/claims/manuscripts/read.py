"""One entry for every draft: its format told by ``fmt`` or the file's suffix, read by
that format's module, with a bibliography the caller passes (``bib``) taking
precedence over what the draft names."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from doiget.claims.manuscripts.bibfiles import References, read_bibliography, read_references
from doiget.claims.manuscripts.model import Manuscript
from doiget.contract import invalid

FORMATS: Final = {
    ".tex": "latex",
    ".ltx": "latex",
    ".md": "markdown",
    ".markdown": "markdown",
    ".qmd": "markdown",
    ".rmd": "markdown",
    ".docx": "docx",
    ".pdf": "pdf",
    ".txt": "text",
    ".text": "text",
}
_BINARY: Final = frozenset({"docx", "pdf"})
# Drafts that carry their bibliography, so a bibliography passed with them is not used.
_OWN_BIBLIOGRAPHY: Final = {
    "docx": "the bibliography passed was not used: a Word draft's citation fields carry "
    "the works they cite.",
    "pdf": "the bibliography passed was not used: a PDF draft's citations are matched to its "
    "own reference list.",
    "text": "the bibliography passed was not used: a text draft's citations are matched to "
    "its own reference list.",
}


def format_of(path: Path, fmt: str | None) -> str:
    """The format to read ``path`` as: ``fmt`` when given, else told by its suffix."""
    chosen = fmt or FORMATS.get(path.suffix.lower())
    if chosen not in set(FORMATS.values()):
        raise invalid(
            f"doiget cannot tell the format of {path.name}; name it as .tex, .md, .docx, "
            ".pdf or .txt, or say which it is with fmt (latex, markdown, docx, pdf, text).",
            "fmt",
        )
    return str(chosen)


def read_manuscript(
    path: Path,
    *,
    bib: Path | None = None,
    text: str | None = None,
    fmt: str | None = None,
    bib_text: str | None = None,
    within: Path | None = None,
) -> Manuscript:
    """The citations and bibliography of the draft at ``path``, or of ``text`` (then
    ``path`` only names the draft: no file it includes or names is read). ``bib``
    (a file) or ``bib_text`` (a bibliography's text: BibTeX, CSL-JSON or RIS) give the
    bibliography when the draft does not name one, or replace the entries it does.
    With ``within``, the draft and every file it names are opened below that folder
    (a caller's allowed folder), each once, never by a link leading out of it."""
    chosen = format_of(path, fmt)
    if text is not None and chosen in _BINARY:
        raise invalid(f"a {chosen} draft is read from its file, not passed as text.", "text")
    given: References | None = None
    if bib is not None:
        given = read_bibliography(bib)
    elif bib_text is not None:
        given = read_references(bib_text, "the bibliography")
    if chosen == "latex":
        from doiget.claims.manuscripts.latex import read_latex

        return read_latex(path, text=text, bib=given, within=within)
    if chosen == "markdown":
        from doiget.claims.manuscripts.markdown import read_markdown

        return read_markdown(path, text=text, bib=given, within=within)
    if chosen == "docx":
        from doiget.claims.manuscripts.docx import read_docx

        manuscript = read_docx(path, within)
    else:
        from doiget.claims.manuscripts.plaintext import read_pdf, read_plain_text

        manuscript = (
            read_pdf(path, within)
            if chosen == "pdf"
            else read_plain_text(path, text=text, within=within)
        )
    if given is not None:
        manuscript.notes.append(_OWN_BIBLIOGRAPHY[chosen])
    return manuscript
