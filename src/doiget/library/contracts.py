"""The library tools' contracts: the chunk tools' requests and results, and index_papers."""

# Annotations are evaluated as the classes are made: pydantic then has no strings to
# compile, which keeps building the models cheap at start-up.
from typing import Annotated, Any, Literal, Self

from pydantic import Field

from doiget.contract import NULLABLE, Reply, Request
from doiget.integrity import Notice
from doiget.library.projects import DEFAULT_PROJECT_ID
from doiget.papers.origin import PdfOrigin

ProjectId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="'namespace/name', as list_projects shows.",
    ),
]
Scalar = str | int
FilterValue = Scalar | Annotated[list[Scalar], Field(min_length=1, max_length=50)]


# -- requests --------------------------------------------------------------------------


class ChunkSearch(Request):
    """A question to a project's passages (find_chunks and query_hybrid).

    The core caps ``top_k`` by the project's top_k_max and checks the filters.
    """

    project: str
    query: str
    top_k: int = 6
    filters: dict[str, Any] | None = None
    full_text: bool = False


class CollectionQuery(Request):
    """A project to describe, with sample payloads (the core shows at most five)."""

    project: str
    sample: int = 0


class ChunkIn(Request):
    """One chunk to store; the same id overwrites."""

    id: Annotated[str, Field(min_length=1, max_length=128)]
    text: Annotated[str, Field(min_length=1, max_length=100_000)]
    embedding: Annotated[list[float], Field(min_length=1, max_length=4096)]
    metadata: dict[str, Any] | None = None


class StoreChunks(Request):
    """Chunks with their embeddings, for one project (the core checks the count)."""

    project: str
    items: list[ChunkIn]
    force_rebuild: bool = False


# -- what MCP tools accept: the same requests, bounded ---------------------------------


class ChunkSearchArgs(ChunkSearch):
    project: ProjectId
    query: Annotated[str, Field(min_length=1, max_length=2000)]
    top_k: Annotated[int, Field(ge=1, le=20, description="Capped by the project's top_k_max.")] = 6
    filters: (
        Annotated[
            dict[str, FilterValue],
            Field(
                description="All must hold; a list means any of. Keys: tags, citekey, doi, year, "
                "section, doc_id."
            ),
        ]
        | None
    ) = None
    full_text: Annotated[bool, Field(description="Add each chunk's untrimmed text.")] = False


class CollectionQueryArgs(CollectionQuery):
    project: ProjectId
    sample: Annotated[int, Field(ge=0, le=5)] = 0


class StoreChunksArgs(StoreChunks):
    project: ProjectId
    items: Annotated[list[ChunkIn], Field(min_length=1, max_length=500)]


class IndexPapers(Request):
    """Stored papers to index into a project (the default project unless named)."""

    project: Annotated[
        ProjectId,
        Field(description="'namespace/name'; the default always exists."),
    ] = DEFAULT_PROJECT_ID
    refs: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=300)]],
        Field(min_length=1, max_length=100),
    ]
    force_rebuild: bool = False
    create: Annotated[
        bool,
        Field(description="Create an unknown project (default settings, hybrid on)."),
    ] = False


# -- results ---------------------------------------------------------------------------


class ProjectInfo(Reply):
    id: str
    collection: str
    embed_model: str
    hybrid_enabled: bool


class Projects(Reply):
    projects: list[ProjectInfo]


class Passage(Reply):
    """A passage with what is needed to cite it."""

    render_text: str
    score: Annotated[float, Field(ge=0, le=1)]
    citekey: str | None
    section: str | None
    page_span: Annotated[list[int], Field(min_length=2, max_length=2)] | None
    section_path: list[str]
    doi: str | None
    url: Annotated[str | None, NULLABLE] = None
    title: Annotated[str | None, NULLABLE] = None
    chunk_id: str | None = None
    full_text: str | None
    integrity: Annotated[
        list[Notice] | None,
        Field(description="The paper's retractions, corrections, concerns; absent if none."),
    ] = None
    pdf_origin: Annotated[
        PdfOrigin | None,
        Field(description="Where the PDF read came from; absent for passages given as text."),
    ] = None


class Passages(Reply):
    """Passages best first; ``hybrid_enabled`` only in query_hybrid's result."""

    sparse = True
    items: list[Passage]
    count: int
    hybrid_enabled: bool | None = None


class Collection(Reply):
    """What a project's collection holds."""

    project: str
    collection: str
    size: int
    embed_model: str
    dimension: Annotated[int | None, NULLABLE] = None
    hybrid_enabled: bool
    payload_keys: list[str]
    indexes: dict[str, list[str]]
    sample: list[dict[str, Any]]


class ChunksWritten(Reply):
    chunks_written: int
    project: str
    embed_model: str
    warnings: list[str] | None = None


class DocumentReport(Reply):
    """What indexing one paper did."""

    doc_id: str
    status: Literal["indexed", "skipped"]
    chunks: int
    pages: int
    reason: Annotated[str | None, NULLABLE] = None
    message: Annotated[str | None, NULLABLE] = None

    @classmethod
    def skipped(cls, doc_id: str, reason: str, message: str) -> Self:
        """The report of a document that was not indexed, and why."""
        return cls(
            doc_id=doc_id, status="skipped", chunks=0, pages=0, reason=reason, message=message
        )


class IndexReport(Reply):
    project: str
    documents: list[DocumentReport]
    indexed: int
    skipped: int
    chunks_written: int | None = None
