"""From a PDF (and its store metadata) to embedded chunk records ready for the index.

Chunk ids are deterministic: a hash of the PDF's content, the chunk's position and
the model id, so indexing the same file twice writes the same ids. The payload
(project, source, zotero, doc, embed_model, version) carries what a citation needs.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from doiget.documents.debris import without_debris
from doiget.documents.pdftext import PdfText, UnusableDocument, pdf_text, read_pdf
from doiget.documents.sections import sectioned
from doiget.documents.sentences import sentences
from doiget.errors import DoigetError
from doiget.library.chunking import Chunk, chunk_sentences
from doiget.library.index.base import ChunkRecord
from doiget.papers.store import open_stored_pdf

if TYPE_CHECKING:
    from doiget.library.embedding import Embedder
    from doiget.library.projects import Project

PAYLOAD_VERSION: Final = 1
# Passages embedded at once between two progress reports.
PASSAGE_BATCH: Final = 8


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A PDF to index, with the bibliographic facts its chunks should carry."""

    doc_id: str  # the store ref, or ``file:`` + absolute path
    path: Path
    # A stored paper's PDF is read only inside its store (never through a link out
    # of it) and only when it is a PDF; a file the user named is read where it is.
    store_root: Path | None = None
    title: str | None = None
    citekey: str | None = None
    doi: str | None = None
    url: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    tags: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Where the PDF came from (doiget.papers.origin.PdfOrigin's fields), kept with each
    # passage: its text is that PDF's, whatever the entry holds later.
    origin: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A document's chunk records and what was read to make them."""

    source: SourceDocument
    records: list[ChunkRecord]
    pages: int


def chunk_id(content_sha256: str, position: int, model: str, doc_id: str = "") -> str:
    """The deterministic id of the chunk at ``position`` (a UUID, which every backend takes).

    ``doc_id`` keeps two documents with identical content (the same PDF stored twice)
    from writing over each other's chunks.
    """
    digest = hashlib.sha256(f"{content_sha256}:{position}:{model}:{doc_id}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def embedding_text(chunk: Chunk, title: str | None) -> str:
    """What the model reads for a chunk: its passage under the document and section titles.

    The headings place a passage ("the results improved") in its context, which the
    passage alone often lacks; the stored and returned text stays the passage itself.
    """
    context = " / ".join(part for part in (title, chunk.section) if part)
    return f"{context}\n{chunk.text}" if context else chunk.text


def payload(
    source: SourceDocument, project: Project, chunk: Chunk, position: int, sha: str, encoder: str
) -> dict[str, Any]:
    """The payload of one chunk (``encoder``: the model and variant that embedded it)."""
    return {
        "project": project.id,
        "source": {
            "path": str(source.path),
            "title": source.title,
            "doi": source.doi,
            "url": source.url,
            "authors": list(source.authors),
            "year": source.year,
            **({"pdf_origin": dict(source.origin)} if source.origin else {}),
        },
        "zotero": {"citekey": source.citekey, "tags": list(source.tags)},
        "doc": {
            "doc_id": source.doc_id,
            "content_sha256": sha,
            "chunk_index": position,
            "page_span": list(chunk.page_span),
            "section": chunk.section,
            "section_path": list(chunk.section_path),
        },
        "embed_model": encoder,
        "version": PAYLOAD_VERSION,
    }


def _text_of(source: SourceDocument) -> PdfText:
    """The text of ``source``'s PDF; a stored paper's is read as every stored PDF is."""
    if source.store_root is None:
        return read_pdf(source.path)
    try:
        with open_stored_pdf(source.store_root, source.path, source.doc_id) as handle:
            data = handle.read()
    except DoigetError as error:
        raise UnusableDocument("unreadable", error.message) from error
    return pdf_text(data, source.path.name)


def prepare(
    source: SourceDocument,
    project: Project,
    embedder: Embedder,
    embedded: Callable[[int, int], None] | None = None,
) -> PreparedDocument:
    """Read, section, chunk and embed one PDF (raises UnusableDocument for a bad one).

    Passages are embedded :data:`PASSAGE_BATCH` at a time, and ``embedded(done,
    total)`` is told after each batch: a long paper is not minutes of silence.
    """
    text = _text_of(source)
    chunks = chunk_sentences(
        sentences(without_debris(sectioned(text.lines))),
        project.chunk_tokens,
        project.chunk_overlap,
        embedder.count_tokens,
    )
    texts = [embedding_text(chunk, source.title) for chunk in chunks]
    vectors: list[Any] = []  # one row of the embedding per passage
    for start in range(0, len(texts), PASSAGE_BATCH):
        vectors.extend(embedder.embed(texts[start : start + PASSAGE_BATCH]))
        if embedded is not None:
            embedded(min(start + PASSAGE_BATCH, len(texts)), len(texts))
    records = [
        ChunkRecord(
            id=chunk_id(text.sha256, position, project.embed_model, source.doc_id),
            text=chunk.text,
            vector=vectors[position].tolist(),
            payload=payload(source, project, chunk, position, text.sha256, embedder.model_id),
        )
        for position, chunk in enumerate(chunks)
    ]
    return PreparedDocument(source, records, text.pages)
