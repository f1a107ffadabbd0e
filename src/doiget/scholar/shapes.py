"""The result objects of the scholar tools, field for field as spec/scholar-api.md has them.

Each result adds one field, ``ref``: a DOI or arXiv id in the form doiget_fetch_paper
takes, or null when the work has none, so an agent can go from a hit to its PDF.
"""

from __future__ import annotations

from typing import Any

from doiget.models import Work
from doiget.refs import fetchable_ref
from doiget.sources.arxiv import pdf_url_for
from doiget.sources.pubmed import PubmedArticle
from doiget.sources.semantic_scholar import S2Paper

ARXIV_ABS = "https://arxiv.org/abs/"


def arxiv_paper(work: Work) -> dict[str, Any]:
    """An arXiv result: the versioned id, as the feed names it."""
    arxiv_id = work.arxiv_id or ""
    return {
        "id": arxiv_id,
        "title": work.title or "",
        "authors": [author.display for author in work.authors],
        "abstract": work.abstract or "",
        "published": work.published or "",
        "updated": work.updated or "",
        "url": ARXIV_ABS + arxiv_id,
        "pdfUrl": work.pdf_url or pdf_url_for(arxiv_id),
        "categories": list(work.categories),
        "primaryCategory": work.primary_category or "",
        "ref": fetchable_ref(work.doi, arxiv_id, prefer="arxiv"),
    }


def s2_paper(paper: S2Paper) -> dict[str, Any]:
    """A Semantic Scholar result. Counts the API did not give are 0."""
    return {
        "paperId": paper.paper_id,
        "title": paper.title or "",
        "abstract": paper.abstract,
        "year": paper.year,
        "authors": [
            {"authorId": author.author_id, "name": author.name} for author in paper.authors
        ],
        "citationCount": paper.citation_count or 0,
        "referenceCount": paper.reference_count or 0,
        "influentialCitationCount": paper.influential_citation_count or 0,
        "url": paper.page_url,
        "venue": paper.venue or paper.journal,
        "publicationDate": paper.publication_date,
        "ref": fetchable_ref(paper.doi, paper.arxiv_id),
    }


def pubmed_paper(article: PubmedArticle) -> dict[str, Any]:
    """A PubMed result; authors in PubMed's short form ("Smith J")."""
    return {
        "pmid": article.pmid,
        "title": article.title,
        "abstract": article.abstract,
        "authors": list(article.author_labels),
        "journal": article.journal,
        "year": article.year,
        "doi": article.doi,
        "url": article.url,
        "publicationTypes": list(article.publication_types),
        "meshTerms": list(article.mesh_terms),
        "ref": fetchable_ref(article.doi, None),
    }
