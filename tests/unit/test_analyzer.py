"""The sparse side's analysis: index terms, and how a query's terms are weighed."""

from __future__ import annotations

from collections import Counter

import pytest

from doiget.library import analyzer


def test_terms_are_stemmed_without_stop_words() -> None:
    assert analyzer.terms("The measured measurements of the samples") == [
        "measur",
        "measur",
        "sampl",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "heat transfer, e.g. in nozzles",
        "heat transfer (e. g., in nozzles)",
        "heat transfer, i.e. in nozzles",
        "heat transfer; cf. nozzles",
        "heat transfer, viz. in nozzles",
        "Heat transfer, E.G. in nozzles",
    ],
)
def test_latin_abbreviations_leave_no_letter_terms(text: str) -> None:
    assert analyzer.terms(text) == ["heat", "transfer", "nozzl"]


def test_single_letters_that_name_things_stay() -> None:
    assert analyzer.terms("vitamin E and G proteins in T cells") == [
        "vitamin",
        "e",
        "g",
        "protein",
        "t",
        "cell",
    ]


def test_a_short_query_lists_each_term_once_in_order() -> None:
    assert analyzer.query_terms("Dark matter and rotation curves") == [
        "dark",
        "matter",
        "rotat",
        "curv",
    ]


@pytest.mark.parametrize(
    ("repeats", "weight"), [(1, 1), (2, 2), (3, 2), (4, 3), (6, 4), (10, 5), (100, 8)]
)
def test_a_repeated_query_term_weighs_more_but_saturates(repeats: int, weight: int) -> None:
    question = " ".join(["titles"] * repeats) + " retrieval"
    counts = Counter(analyzer.query_terms(question))
    assert counts == {"titl": weight, "retriev": 1}


def test_a_long_question_keeps_its_subject_ahead_of_its_other_words() -> None:
    question = (
        "What problems arise in making descriptive titles? What difficulties are there "
        "in retrieving articles from approximate titles? How relevant are titles?"
    )
    counts = Counter(analyzer.query_terms(question))
    assert counts["titl"] == 2
    assert all(count == 1 for term, count in counts.items() if term != "titl")
    # Stop words and question words leave nothing behind.
    assert not {"what", "are", "how", "there", "in"} & set(counts)


def test_a_query_of_stop_words_has_no_terms() -> None:
    assert analyzer.query_terms("what is the of and") == []
    assert analyzer.query_terms("") == []
