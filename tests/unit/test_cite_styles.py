"""Formatted references: the fixes to citeproc-py (each rule on its own), the output
formats, errors for styles and locales, the retraction notice, RIS, the tool budget."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import rispy

from doiget.cite.formatted import integrity_notice, render
from doiget.cite.ris import to_ris_many
from doiget.cite.styles import load_style, resolve_locale, style_ids
from doiget.errors import DoigetError
from doiget.models import Author, UpdateNotice, Work
from doiget.server.snapshot import stored

NUMPY = Work(
    source="crossref",
    title="Array programming with NumPy",
    authors=(Author("Harris", "Charles R."), Author("van der Walt", "Stéfan J.")),
    year=2020,
    venue="Nature",
    volume="585",
    pages="357-362",
    type="article-journal",
    doi="10.1038/s41586-020-2649-2",
)


def one(work: Work, style: str, text_format: str = "text", locale: str | None = None) -> str:
    loaded = load_style(style)
    rendered = render([work], loaded, resolve_locale(locale, loaded), text_format)  # type: ignore[arg-type]
    return rendered.entries[0][1]


def test_punctuation_moves_inside_quotes_where_the_locale_says_so() -> None:
    assert "“Array programming with NumPy,” Nature" in one(NUMPY, "ieee")
    # en-GB quotes with single marks and keeps punctuation outside them.
    assert "‘Array programming with NumPy’, Nature" in one(NUMPY, "ieee", locale="en-GB")


def test_a_question_mark_absorbs_the_period_after_it() -> None:
    asked = replace(NUMPY, title="What is a quantum computer?")
    assert "computer?." not in one(asked, "apa")
    assert "computer? Nature" in one(asked, "apa")


def test_initialize_false_keeps_given_names_whole() -> None:
    assert one(NUMPY, "chicago-author-date").startswith("Harris, Charles R., and Stéfan")


def test_particles_are_placed_by_the_style() -> None:
    # chicago demotes the particle in the inverted first name; apa keeps it in front.
    first = replace(NUMPY, authors=(Author("van Beethoven", "Ludwig"),))
    assert one(first, "chicago-author-date").startswith("Beethoven, Ludwig van.")
    assert one(first, "apa").startswith("van Beethoven, L.")


def test_capitalize_first_leaves_mixed_case_words() -> None:
    preprint = Work(source="arxiv", title="T", authors=NUMPY.authors, year=2017)
    preprint = replace(preprint, type="article", arxiv_id="1706.03762")
    assert "(arXiv:1706.03762)" in one(preprint, "apa")


def test_title_case_capitalises_hyphenated_parts_and_keeps_stop_words() -> None:
    titled = replace(NUMPY, title="Pre-training of models: a study of notice to readers")
    entry = one(titled, "modern-language-association")
    assert "“Pre-Training of Models: A Study of Notice to Readers.”" in entry


def test_a_substituted_title_is_not_printed_twice() -> None:
    anonymous = replace(NUMPY, authors=())
    entry = one(anonymous, "apa")
    assert entry.count("Array programming with NumPy") == 1
    assert "Nature, 585" in entry


def test_page_ranges_are_never_shortened_into_other_pages() -> None:
    assert "pp. 1–29" in one(replace(NUMPY, pages="1-29"), "modern-language-association")
    assert "1–10" in one(replace(NUMPY, pages="1-10"), "vancouver-nlm")


def test_numbered_entries_keep_their_number_apart() -> None:
    assert one(NUMPY, "ieee").startswith("[1] C. R. Harris")
    assert one(NUMPY, "nature").startswith("1. Harris, C. R.")


def test_in_text_citations_author_date_and_numeric() -> None:
    other = replace(NUMPY, title="Another", authors=(Author("Vaswani", "Ashish"),), year=2017)
    apa = load_style("apa")
    rendered = render([NUMPY, other], apa, "en-US")
    assert rendered.citations == ["(Harris & van der Walt, 2020)", "(Vaswani, 2017)"]
    assert rendered.together == "(Harris & van der Walt, 2020; Vaswani, 2017)"
    ieee = render([NUMPY, other], load_style("ieee"), "en-US")
    assert ieee.citations == ["[1]", "[2]"]


def test_html_and_markdown_escape_the_text_and_mark_the_styling() -> None:
    tricky = replace(NUMPY, venue="Nature <Physics>", title="A *star* & _under_")
    html_entry = one(tricky, "apa", "html")
    assert "<i>Nature &lt;Physics&gt;</i>" in html_entry and "&amp;" in html_entry
    markdown = one(tricky, "apa", "markdown")
    assert "\\*star\\*" in markdown and "*Nature \\<Physics\\>*" in markdown
    assert "<" not in one(tricky, "apa").replace("<Physics>", "")


def test_unknown_styles_and_locales_are_clear_errors() -> None:
    with pytest.raises(DoigetError) as unknown:
        load_style("vancouver")
    assert "vancouver-nlm" in unknown.value.message
    with pytest.raises(DoigetError):
        load_style("../../etc/passwd")
    with pytest.raises(DoigetError) as locale:
        resolve_locale("xx-YY", load_style("apa"))
    assert "en-US" in locale.value.message
    assert resolve_locale("de", load_style("apa")) == "de-DE"


def test_dependent_styles_format_like_their_parent() -> None:
    assert {"apa", "ieee", "nature", "vancouver-nlm"} <= set(style_ids())
    assert load_style("vancouver-nlm").path.name == "nlm-citation-sequence.csl"


def test_a_style_that_cannot_be_rendered_is_an_error_not_a_reference(tmp_path) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "broken.csl"
    broken.write_text('<style xmlns="http://purl.org/net/xbiblio/csl" version="1.0"><citation>')
    from doiget.cite.styles import Style

    with pytest.raises(DoigetError) as failed:
        render([NUMPY], Style("broken", broken, None), "en-US")
    assert "could not be rendered" in failed.value.message


def test_a_retracted_work_says_so_in_every_style_and_in_ris() -> None:
    notice = UpdateNotice("retraction", "updated-by", doi="10.1038/notice", date="2021-01-01")
    retracted = replace(NUMPY, updates=(notice,))
    said = "[Retracted (2021-01-01), notice https://doi.org/10.1038/notice]"
    assert integrity_notice(retracted) == said
    assert integrity_notice(NUMPY) is None
    for style in ("apa", "ieee", "modern-language-association"):
        assert one(retracted, style).endswith(said)
        assert "Retracted" not in one(NUMPY, style)
    flagged = replace(NUMPY, is_retracted=True)
    assert one(flagged, "apa").endswith("[Retracted]")
    assert "N1  - [Retracted" in to_ris_many([retracted])


def test_ris_reads_back_with_rispy() -> None:
    text = to_ris_many([NUMPY, replace(NUMPY, type="chapter", doi="10.1/x")])
    records = rispy.loads(text)
    assert [r["type_of_reference"] for r in records] == ["JOUR", "CHAP"]
    assert records[0]["authors"] == ["Harris, Charles R.", "van der Walt, Stéfan J."]
    assert (records[0]["start_page"], records[0]["end_page"]) == ("357", "362")
    assert records[0]["id"] != records[1]["id"]


def test_every_tool_fits_the_budget_of_the_model() -> None:
    sizes = {}
    for toolset in stored().values():
        for tool in toolset["tools"]:
            schema = json.dumps(tool["inputSchema"], separators=(",", ":"), ensure_ascii=False)
            sizes[tool["name"]] = len((tool["name"] + tool["description"] + schema).encode())
    print(f"tool size: mean {sum(sizes.values()) / len(sizes):.0f} bytes over {len(sizes)}")
    assert sizes["doiget_format_references"] <= 900
    assert sum(sizes.values()) / len(sizes) <= 900
