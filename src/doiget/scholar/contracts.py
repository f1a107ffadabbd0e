"""The scholar tools' contracts: camelCase requests and the result objects, field for field.

Each result adds one field, ``ref``: a DOI or arXiv id in the form doiget_fetch_paper
takes, or null when the work has none, so an agent can go from a hit to its PDF.
"""

# Annotations are evaluated as the classes are made: pydantic then has no strings to
# compile, which keeps building the models cheap at start-up.
from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from doiget.contract import Hint, Reply, Request

MAX_RESULTS = 100
DEFAULT_RESULTS = 10

Identifier = Annotated[str, Field(min_length=1, max_length=256)]
MaxResults = Annotated[int, Field(alias="maxResults", ge=1, le=MAX_RESULTS)]
Year = Annotated[int, Field(ge=1900, le=2100)]


# -- requests --------------------------------------------------------------------------


class ScholarSearch(Request):
    """Words to search for, how many results, and an optional year range (inclusive)."""

    query: Annotated[str, Field(min_length=1, max_length=1000)]
    max_results: MaxResults = DEFAULT_RESULTS
    start_year: Year | None = Field(None, alias="startYear")
    end_year: Year | None = Field(None, alias="endYear")

    @field_validator("query")
    @classmethod
    def _words(cls, query: str) -> str:
        words = " ".join(query.split())
        if not words:
            raise ValueError("query is empty; give the words to search for")
        return words

    @model_validator(mode="after")
    def _ordered_years(self) -> Self:
        start, end = self.start_year, self.end_year
        if start is not None and end is not None and start > end:
            raise ValueError(f"startYear ({start}) is after endYear ({end}); swap them or drop one")
        return self

    @property
    def key(self) -> tuple[str, int, int | None, int | None]:
        """Every parameter that shapes the answer, for the cache."""
        return (self.query, self.max_results, self.start_year, self.end_year)


class ArxivSearch(ScholarSearch):
    """An arXiv search: also by author, in one of arXiv's orders."""

    author: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    sort_by: Literal["relevance", "lastUpdatedDate", "submittedDate"] = Field(
        "relevance", alias="sortBy"
    )


class ArxivLookup(Request):
    """One arXiv paper, by any arXiv id form."""

    arxiv_id: Identifier = Field(alias="arxivId")


class SemanticScholarLookup(Request):
    """One Semantic Scholar paper, by S2 id, DOI, arXiv id or prefixed id."""

    identifier: Identifier


class CitingPapers(Request):
    """The papers citing one paper."""

    paper_id: Identifier = Field(alias="paperId")
    max_results: MaxResults = DEFAULT_RESULTS


class PubmedLookup(Request):
    """One PubMed record."""

    pmid: Annotated[
        str,
        Field(pattern=r"^[0-9]{1,10}$"),
        Hint("must be the digits of a PubMed id, e.g. '29106400'"),
    ]


# -- results ---------------------------------------------------------------------------

Ref = str | None  # a DOI or arXiv id doiget_fetch_paper takes; null when the work has none


class ArxivPaper(Reply):
    """An arXiv result; ``id`` is versioned, as the feed names it."""

    id: str
    title: str
    authors: list[str]
    abstract: str
    published: str
    updated: str
    url: str
    pdf_url: str = Field(alias="pdfUrl")
    categories: list[str]
    primary_category: str = Field(alias="primaryCategory")
    ref: Ref


class S2Author(Reply):
    author_id: str | None = Field(alias="authorId")
    name: str


class SemanticScholarPaper(Reply):
    """A Semantic Scholar result; counts the API did not give are 0."""

    paper_id: str = Field(alias="paperId")
    title: str
    abstract: str | None
    year: int | None
    authors: list[S2Author]
    citation_count: int = Field(alias="citationCount")
    reference_count: int = Field(alias="referenceCount")
    influential_citation_count: int = Field(alias="influentialCitationCount")
    url: str
    venue: str | None
    publication_date: str | None = Field(alias="publicationDate")
    ref: Ref


class PubmedPaper(Reply):
    """A PubMed record; authors in PubMed's short form ("Smith J")."""

    pmid: str
    title: str
    abstract: str
    authors: list[str]
    journal: str
    year: str
    doi: str | None
    url: str
    publication_types: list[str] = Field(alias="publicationTypes")
    mesh_terms: list[str] = Field(alias="meshTerms")
    ref: Ref


class ArxivPapers(Reply):
    result: list[ArxivPaper]


class SemanticScholarPapers(Reply):
    result: list[SemanticScholarPaper]


class PubmedPapers(Reply):
    result: list[PubmedPaper]


class Bibtex(Reply):
    result: str
