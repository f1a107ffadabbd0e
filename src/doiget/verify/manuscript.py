"""A PDF manuscript's reference list, one text per reference (the layout reading is
:mod:`doiget.documents.bibliography`'s)."""

from __future__ import annotations

from doiget.contract import invalid


def reference_list(data: bytes, name: str) -> list[str]:
    """The references of the PDF manuscript ``data`` (the file called ``name``), one
    text each, without their list numbers."""
    from doiget.documents.bibliography import reference_entries
    from doiget.documents.pdftext import UnusableDocument, pdf_text

    try:
        lines = pdf_text(data, name).lines
    except UnusableDocument as error:
        raise invalid(f"{error.message}.") from None
    entries = reference_entries(lines)
    if not entries:
        raise invalid(
            f"{name} has no reference list under a References or Bibliography heading; "
            "pass the references as a .bib, .ris, .json or .txt file instead."
        )
    return [entry.text for entry in entries]
