"""PubMed through NCBI E-utilities: ``esearch`` for ids, ``efetch`` for the records.

Records are PubMed XML (``PubmedArticleSet``) read with lxml: structured abstracts
keep their section labels, inline markup (italics, sub/superscripts, MathML) is
flattened to text, the DOI comes from the article id list (or the ELocationID), and
the year from PubDate, else MedlineDate ("1998 Dec-1999 Jan"), else ArticleDate.
Query syntax (MeSH terms, field tags, boolean operators) is passed through as typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from lxml import etree

from doiget.config import Settings
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Author, Work
from doiget.net.client import SourceClient
from doiget.secret import revealed
from doiget.sources.shape import ShapeError, bare_doi, parse_or_drift, text
from doiget.sources.xmldoc import inner_text, parse_xml

EUTILS: Final = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
TOOL_NAME: Final = "doiget"
ARTICLE_PAGE: Final = "https://pubmed.ncbi.nlm.nih.gov/"
_YEAR: Final = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")


@dataclass(frozen=True, slots=True)
class EutilsIdentity:
    """What E-utilities asks every caller to send: tool, contact and (optional) key."""

    email: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> EutilsIdentity:
        """The identity these settings configure: the PubMed contact (else the general
        one) and the PubMed key."""
        return cls(
            email=settings.pubmed_email or settings.email,
            api_key=revealed(settings.pubmed_api_key),
        )

    def params(self) -> dict[str, str]:
        """The identity as query parameters (the key only when configured)."""
        out = {"tool": TOOL_NAME}
        if self.email:
            out["email"] = self.email
        if self.api_key:
            out["api_key"] = self.api_key
        return out


@dataclass(frozen=True, slots=True)
class PubmedArticle:
    """One PubMed record, every field doiget reads from it."""

    pmid: str
    title: str
    abstract: str
    authors: tuple[Author, ...]
    author_labels: tuple[str, ...]  # "Smith J": PubMed's own short form
    journal: str
    year: str
    doi: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    issn: tuple[str, ...] = ()
    publication_types: tuple[str, ...] = ()
    mesh_terms: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        """The record's page on pubmed.ncbi.nlm.nih.gov."""
        return f"{ARTICLE_PAGE}{self.pmid}/"

    def to_work(self) -> Work:
        """The record as a :class:`Work` (for citation export)."""
        return Work(
            source="pubmed",
            title=self.title or None,
            authors=self.authors,
            year=int(self.year) if self.year.isdigit() else None,
            doi=self.doi,
            pmid=self.pmid,
            abstract=self.abstract or None,
            venue=self.journal or None,
            volume=self.volume,
            issue=self.issue,
            pages=self.pages,
            type="article-journal",
            issn=self.issn,
            url=self.url,
        )


def _texts(node: etree._Element, path: str) -> tuple[str, ...]:
    return tuple(found for item in node.findall(path) if (found := inner_text(item)))


def _author(node: etree._Element) -> tuple[Author, str] | None:
    collective = inner_text(node.find("CollectiveName"))
    if collective:
        return Author(literal=collective), collective
    family = inner_text(node.find("LastName"))
    if not family:
        return None
    given = inner_text(node.find("ForeName"))
    initials = inner_text(node.find("Initials"))
    if not given and initials:
        given = " ".join(f"{letter}." for letter in initials)
    label = f"{family} {initials}" if initials else family
    return Author(family=family, given=given), label


def _abstract(article: etree._Element) -> str:
    parts = []
    for node in article.findall("Abstract/AbstractText"):
        body = inner_text(node)
        if not body:
            continue
        label = text(node.get("Label"))
        parts.append(f"{label}: {body}" if label else body)
    return "\n".join(parts)


def _year(article: etree._Element) -> str:
    pub_date = article.find("Journal/JournalIssue/PubDate")
    if pub_date is not None:
        year = text(pub_date.findtext("Year"))
        if year:
            return year
        match = _YEAR.search(pub_date.findtext("MedlineDate") or "")
        if match:
            return match.group(1)
    return text(article.findtext("ArticleDate/Year")) or ""


def _doi(record: etree._Element, article: etree._Element) -> str | None:
    # The record's own id list, not the ones inside its reference list.
    for node in record.findall("PubmedData/ArticleIdList/ArticleId"):
        if node.get("IdType") == "doi" and (doi := bare_doi(node.text)):
            return doi
    for node in article.findall("ELocationID"):
        if node.get("EIdType") == "doi" and (doi := bare_doi(node.text)):
            return doi
    return None


def parse_article(record: etree._Element) -> PubmedArticle:
    """One ``PubmedArticle`` element."""
    citation = record.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    pmid = text(citation.findtext("PMID")) if citation is not None else None
    if citation is None or article is None or not pmid:
        raise ShapeError("returned a PubmedArticle without MedlineCitation/Article/PMID")
    authors = [found for node in article.findall("AuthorList/Author") if (found := _author(node))]
    journal = article.find("Journal")
    return PubmedArticle(
        pmid=pmid,
        title=inner_text(article.find("ArticleTitle")) or "",
        abstract=_abstract(article),
        authors=tuple(author for author, _ in authors),
        author_labels=tuple(label for _, label in authors),
        journal=(
            inner_text(article.find("Journal/Title"))
            or inner_text(article.find("Journal/ISOAbbreviation"))
            or ""
        ),
        year=_year(article),
        doi=_doi(record, article),
        volume=text(article.findtext("Journal/JournalIssue/Volume")),
        issue=text(article.findtext("Journal/JournalIssue/Issue")),
        pages=text(article.findtext("Pagination/MedlinePgn")),
        issn=_texts(journal, "ISSN") if journal is not None else (),
        publication_types=_texts(article, "PublicationTypeList/PublicationType"),
        mesh_terms=_texts(citation, "MeshHeadingList/MeshHeading/DescriptorName"),
    )


def parse_article_set(body: bytes) -> list[PubmedArticle]:
    """Every article of an efetch answer (book records, which carry no journal, are skipped)."""
    root = parse_xml(body, "PubMed records")
    if root.tag != "PubmedArticleSet":
        error = text(root.findtext("ERROR")) if root.tag == "eFetchResult" else None
        raise ShapeError(error or f"returned <{root.tag}> where a PubmedArticleSet belongs")
    return [parse_article(record) for record in root.findall("PubmedArticle")]


@dataclass(frozen=True, slots=True)
class SearchHits:
    """What esearch found: the total count and the ids of the first page, best first."""

    count: int
    ids: list[str]


def parse_search(body: bytes) -> SearchHits:
    """An ``eSearchResult``; its ``ERROR`` element is an upstream failure."""
    root = parse_xml(body, "search results")
    if root.tag != "eSearchResult":
        raise ShapeError(f"returned <{root.tag}> where an eSearchResult belongs")
    error = text(root.findtext("ERROR"))
    if error:
        raise DoigetError(ErrorCode.NETWORK_ERROR, f"PubMed could not run the search: {error}")
    count = text(root.findtext("Count"))
    if count is None or not count.isdigit():
        raise ShapeError("returned search results without a Count")
    return SearchHits(int(count), [pmid for pmid in _texts(root, "IdList/Id") if pmid.isdigit()])


async def search_ids(
    client: SourceClient,
    term: str,
    limit: int,
    years: tuple[int | None, int | None],
    identity: EutilsIdentity,
    *,
    newest_first: bool = False,
) -> SearchHits:
    """The ids of the ``limit`` most relevant (or newest) records for ``term``.

    Years filter on the publication date, both ends inclusive.
    """
    params: dict[str, str | int] = {
        "db": "pubmed",
        "term": term,
        "retmax": limit,
        "retstart": 0,
        "sort": "pub_date" if newest_first else "relevance",
        **identity.params(),
    }
    start, end = years
    if start is not None or end is not None:
        params |= {
            "datetype": "pdat",
            "mindate": f"{start if start is not None else 1800}/01/01",
            "maxdate": f"{end if end is not None else 3000}/12/31",
        }
    fetched = await client.get(EUTILS + "esearch.fcgi", params=params)
    return parse_or_drift(client, parse_search, fetched.content)


async def fetch_articles(
    client: SourceClient, pmids: Sequence[str], identity: EutilsIdentity
) -> list[PubmedArticle]:
    """The records of ``pmids`` in the order asked (ids PubMed does not know are absent)."""
    if not pmids:
        return []
    params: dict[str, str | int] = {
        "db": "pubmed",
        "id": ",".join(pmids),
        "retmode": "xml",
        **identity.params(),
    }
    fetched = await client.get(EUTILS + "efetch.fcgi", params=params)
    articles = parse_or_drift(client, parse_article_set, fetched.content)
    position = {pmid: index for index, pmid in enumerate(pmids)}
    return sorted(articles, key=lambda article: position.get(article.pmid, len(position)))
