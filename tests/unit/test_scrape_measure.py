"""Sizing, tidying and cutting extracted text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doiget.web.scrape.measure import clean_text, estimated_tokens, size_category, truncate_utf8


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("abcd", 1), ("abcde", 2), ("é" * 8, 2)])
def test_estimated_tokens_is_a_quarter_of_the_characters_rounded_up(text: str, tokens: int) -> None:
    assert estimated_tokens(text) == tokens


@pytest.mark.parametrize(
    ("tokens", "band"),
    [
        (0, "small"),
        (1_999, "small"),
        (2_000, "medium"),
        (9_999, "medium"),
        (10_000, "large"),
        (49_999, "large"),
        (50_000, "very_large"),
        (10**9, "very_large"),
    ],
)
def test_size_category_bands(tokens: int, band: str) -> None:
    assert size_category(tokens) == band


def test_clean_text_drops_invisible_and_control_characters() -> None:
    dirty = "\ufeffA\u200bB\u200d C\x00\x07\x1b\x7f\x85\u202e D\u00ad\r\nE\rF\tG   \n\n\n\nH  "
    assert clean_text(dirty) == "AB C D\nE\nF\tG\n\nH"


def test_text_within_the_budget_is_untouched() -> None:
    assert truncate_utf8("short text", 10) == ("short text", False)
    assert truncate_utf8("", 0) == ("", False)


def test_cut_prefers_a_paragraph_break_near_the_end() -> None:
    text = "A" * 95 + "\n\nSecond paragraph. It goes on for a while."
    cut, truncated = truncate_utf8(text, 100)
    assert truncated and cut == "A" * 95


def test_cut_falls_back_to_a_sentence_end() -> None:
    text = "Word " * 18 + "end. More words follow here and here."
    cut, truncated = truncate_utf8(text, 100)
    assert truncated and cut.endswith("end.")


def test_cut_falls_back_to_a_word_boundary() -> None:
    text = "word " * 40
    cut, truncated = truncate_utf8(text, 98)
    assert truncated and cut == ("word " * 19).rstrip()


def test_cut_ignores_boundaries_far_from_the_budget() -> None:
    # The only space is in the first half: cutting there would waste half the budget.
    text = "ab cd" + "x" * 200
    cut, truncated = truncate_utf8(text, 100)
    assert truncated and cut == text[:100]


def test_cut_never_splits_a_character() -> None:
    text = "€" * 10  # three bytes each
    cut, truncated = truncate_utf8(text, 10)
    assert truncated and cut == "€" * 3


def test_zero_budget_gives_nothing() -> None:
    assert truncate_utf8("abc", 0) == ("", True)


@given(st.text(max_size=300), st.integers(min_value=0, max_value=400))
def test_cut_is_a_valid_prefix_within_the_budget(text: str, budget: int) -> None:
    cut, truncated = truncate_utf8(text, budget)
    assert truncated == (len(text.encode("utf-8")) > budget)
    assert len(cut.encode("utf-8")) <= budget or not truncated
    assert text.startswith(cut)
