"""Counts in what the web tools say about their results read as a reader says them."""

from __future__ import annotations

from typing import Any

import pytest

from doiget.web.results import (
    AcademicSearchResult,
    PatentSearchResult,
    ResearchExportResult,
    SearchAndScrapeResult,
    WebSearchResult,
)
from doiget.wording import counted


@pytest.mark.parametrize(
    ("count", "said"), [(0, "0 sources"), (1, "1 source"), (2, "2 sources"), (11, "11 sources")]
)
def test_a_count_of_one_takes_the_singular(count: int, said: str) -> None:
    assert counted(count, "source") == said


def _export(steps: int, sources: int) -> Any:
    return ResearchExportResult.model_construct(
        format="ris", session_id="abc", step_count=steps, source_count=sources
    )


@pytest.mark.parametrize(
    ("result", "headline"),
    [
        (
            WebSearchResult.model_construct(result_count=1, query="q"),
            "1 web result for 'q'",
        ),
        (
            SearchAndScrapeResult.model_construct(sources=[object()], query="q", status="complete"),
            "1 page read and combined for 'q' (complete)",
        ),
        (AcademicSearchResult.model_construct(result_count=1, query="q"), "1 paper for 'q'"),
        (PatentSearchResult.model_construct(result_count=1, query="q"), "1 patent for 'q'"),
        (PatentSearchResult.model_construct(result_count=3, query="q"), "3 patents for 'q'"),
        (_export(1, 1), "ris export of research session abc (1 step, 1 source)"),
        (_export(2, 0), "ris export of research session abc (2 steps, 0 sources)"),
    ],
)
def test_result_headlines_count_in_the_right_number(result: Any, headline: str) -> None:
    assert result.headline() == headline
