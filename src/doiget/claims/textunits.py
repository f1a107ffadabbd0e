"""Turning a source into units: a text's sentences with offsets, a document's with pages.

Both split sentences the way every reader of documents does
(:mod:`doiget.documents.sentences`), so evidence quoted from a claim check reads the
same as the passage a search or a quote check shows.
"""

from __future__ import annotations

from doiget.claims.units import Unit
from doiget.documents.debris import without_debris
from doiget.documents.document import Document
from doiget.documents.sections import sectioned
from doiget.documents.sentences import sentences, split_sentences


def units_of_text(text: str) -> list[Unit]:
    """The sentences of ``text``, each with offsets such that ``text[start:end]`` is it."""
    out: list[Unit] = []
    for begin, end in split_sentences(text):
        piece = text[begin:end]
        start = begin + len(piece) - len(piece.lstrip())
        stop = begin + len(piece.rstrip())
        out.append(Unit(text[start:stop], start=start, end=stop))
    return out


def units_of_document(document: Document) -> list[Unit]:
    """The body sentences of ``document``, each with its first page and innermost section
    (None before the first heading)."""
    return [
        Unit(
            sentence.text,
            page=sentence.first_page,
            section=sentence.path[-1] if sentence.path else None,
        )
        for sentence in sentences(without_debris(sectioned(document.lines)))
    ]
