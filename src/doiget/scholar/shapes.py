"""The scholar tools' results, built from what the sources parsed."""

from __future__ import annotations

from doiget.models import Work
from doiget.refs import fetchable_ref
from doiget.scholar.contracts import ArxivPaper, PubmedPaper, S2Author, SemanticScholarPaper
from doiget.sources.arxiv import pdf_url_for
from doiget.sources.pubmed import PubmedArticle
from doiget.sources.semantic_scholar import S2Paper

ARXIV_ABS = "https://arxiv.org/abs/"


def arxiv_paper(work: Work) -> ArxivPaper:
    """An arXiv result: the versioned id, as the feed names it."""
    arxiv_id = work.arxiv_id or ""
    return ArxivPaper(
        id=arxiv_id,
        title=work.title or "",
        authors=[author.display for author in work.authors],
        abstract=work.abstract or "",
        published=work.published or "",
        updated=work.updated or "",
        url=ARXIV_ABS + arxiv_id,
        pdf_url=work.pdf_url or pdf_url_for(arxiv_id),
        categories=list(work.categories),
        primary_category=work.primary_category or "",
        ref=fetchable_ref(work.doi, arxiv_id, prefer="arxiv"),
    )


def s2_paper(paper: S2Paper) -> SemanticScholarPaper:
    """A Semantic Scholar result. Counts the API did not give are 0."""
    return SemanticScholarPaper(
        paper_id=paper.paper_id,
        title=paper.title or "",
        abstract=paper.abstract,
        year=paper.year,
        authors=[
            S2Author(author_id=author.author_id, name=author.name) for author in paper.authors
        ],
        citation_count=paper.citation_count or 0,
        reference_count=paper.reference_count or 0,
        influential_citation_count=paper.influential_citation_count or 0,
        url=paper.page_url,
        venue=paper.venue or paper.journal,
        publication_date=paper.publication_date,
        ref=fetchable_ref(paper.doi, paper.arxiv_id),
    )


def pubmed_paper(article: PubmedArticle) -> PubmedPaper:
    """A PubMed result; authors in PubMed's short form ("Smith J")."""
    return PubmedPaper(
        pmid=article.pmid,
        title=article.title,
        abstract=article.abstract,
        authors=list(article.author_labels),
        journal=article.journal,
        year=article.year,
        doi=article.doi,
        url=article.url,
        publication_types=list(article.publication_types),
        mesh_terms=list(article.mesh_terms),
        ref=fetchable_ref(article.doi, None),
    )
