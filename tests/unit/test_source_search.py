"""The search halves of the source clients, as both the scholar and web toolsets use them."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.config import load_settings
from doiget.sources import openalex
from doiget.sources.pubmed import TOOL_NAME, EutilsIdentity
from doiget.sources.semantic_scholar import api_key_of, year_range


@pytest.mark.parametrize(
    ("start", "end", "sent"),
    [
        (2020, 2020, "2020"),
        (2019, 2021, "2019-2021"),
        (2019, None, "2019-"),
        (None, 2021, "-2021"),
        (None, None, None),
    ],
)
def test_semantic_scholar_year_range(start: int | None, end: int | None, sent: str | None) -> None:
    assert year_range(start, end) == sent


def test_openalex_search_parameters() -> None:
    plain = openalex.WorksSearch("lake ice", 5).params(None)
    assert plain == {"search": "lake ice", "per_page": 5, "select": openalex.SEARCH_FIELDS}
    full = openalex.WorksSearch(
        "lake ice",
        10,
        page=3,
        years=(2001, 2005),
        indexed_in="pubmed",
        open_access_only=True,
        newest_first=True,
    ).params("me@example.org")
    assert full["filter"] == "publication_year:2001-2005,indexed_in:pubmed,is_oa:true"
    assert full["sort"] == "publication_date:desc" and full["page"] == 3
    assert full["mailto"] == "me@example.org"


@pytest.mark.parametrize(
    ("years", "year_filter"),
    [
        ((2019, None), "from_publication_date:2019-01-01"),
        ((None, 2019), "to_publication_date:2019-12-31"),
        ((2020, 2020), "publication_year:2020-2020"),
    ],
)
def test_openalex_open_ended_years(years: tuple[int | None, int | None], year_filter: str) -> None:
    assert openalex.WorksSearch("q", 1, years=years).params(None)["filter"] == year_filter


def test_openalex_refuses_an_index_it_cannot_filter_on() -> None:
    with pytest.raises(ValueError, match="semantic_scholar"):
        openalex.WorksSearch("q", 1, indexed_in="semantic_scholar").params(None)


def test_openalex_search_page_keeps_open_access_flags_and_the_total() -> None:
    page = openalex.parse_found_page(
        {
            "meta": {"count": 42},
            "results": [
                {"id": "https://openalex.org/W1", "title": "Open", "open_access": {"is_oa": True}},
                {"id": "https://openalex.org/W2", "title": "Unknown"},
            ],
        }
    )
    assert page.total == 42
    assert [(hit.work.openalex_id, hit.open_access) for hit in page.found] == [
        ("W1", True),
        ("W2", None),
    ]


def test_identity_and_keys_come_from_settings(tmp_path: Path) -> None:
    base = {"DOIGET_CONFIG": str(tmp_path / "absent.toml"), "DOIGET_DATA_DIR": str(tmp_path)}
    general = load_settings({**base, "DOIGET_EMAIL": "all@example.org"})
    assert EutilsIdentity.from_settings(general).params() == {
        "tool": TOOL_NAME,
        "email": "all@example.org",
    }
    assert api_key_of(general) is None
    keyed = load_settings(
        {
            **base,
            "DOIGET_EMAIL": "all@example.org",
            "PUBMED_EMAIL": "med@example.org",
            "PUBMED_API_KEY": "ncbi-key",
            "SEMANTIC_SCHOLAR_API_KEY": "s2-key",
        }
    )
    assert EutilsIdentity.from_settings(keyed).params() == {
        "tool": TOOL_NAME,
        "email": "med@example.org",
        "api_key": "ncbi-key",
    }
    assert "ncbi-key" not in repr(EutilsIdentity.from_settings(keyed))
    assert api_key_of(keyed) == "s2-key"
