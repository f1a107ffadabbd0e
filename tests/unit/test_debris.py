"""Figure and table debris leaves passages; prose, captions and headings stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.documents.debris import is_caption, is_number_run, without_debris
from doiget.documents.pdftext import Line, read_pdf
from doiget.documents.sections import SectionedLine, sectioned

LONGEVAL = Path(__file__).resolve().parent.parent / "fixtures" / "pdf"
LONGEVAL /= "acl-2023.eacl-main.121-longeval.pdf"


def lines(*texts: str) -> list[SectionedLine]:
    return [SectionedLine(Line(text, 1, 10.0, False), ("Results",)) for text in texts]


@pytest.mark.parametrize(
    "text",
    [
        "0.2 0.0 0.2 0.4 0.6 0.8 1.0",
        "0 20 40 60 80 100",
        "0.0",
        "12.5",
        "BM25 (1995) 0.38 0.46 0.56",
        "SummaC-NLI (2022) 0.22 0.26 0.34",
        "Likert-scale COARSE-grained 24 15%",
        "None 93% 0.71 41.4 115.6",
        "\u22121.2 \u00b1 0.3 4.5\u20136.7 [12] 1,024",  # minus, plus-minus, en dash
    ],
)
def test_number_runs(text: str) -> None:
    assert is_number_run(text)


@pytest.mark.parametrize(
    "text",
    [
        "In 2019, 45% of the 120 patients were treated with 5 mg of the drug daily.",
        "Table 2: Results on 3 datasets (2018-2022), 5 seeds each.",
        "Figure 4. Accuracy over 10 runs",
        "Example 1",
        "5 Conclusion",
        "see Section 4.2 and Appendix B for 12 more results on the test set",
        "",
    ],
)
def test_prose_captions_and_headings_are_not_runs(text: str) -> None:
    assert not is_number_run(text)


def test_labels_beside_a_run_go_and_prose_beside_it_stays() -> None:
    page = lines(
        "We compare the metrics against human judgements below.",
        "Pearson correlation",
        "0.2 0.0 0.2 0.4 0.6 0.8 1.0",
        "rouge-1_f1",
        "Figure 2: 95% confidence intervals of Pearson correlations",
        "0 20 40 60 80 100",
        "The correlation of every metric is weak at the summary level.",
        "Density",
    )
    kept = [item.line.text for item in without_debris(page)]
    assert kept == [
        "We compare the metrics against human judgements below.",
        "Figure 2: 95% confidence intervals of Pearson correlations",
        "The correlation of every metric is weak at the summary level.",
        "Density",  # a short line, but no number run beside it
    ]


def test_captions_are_recognised() -> None:
    assert is_caption("Table 11: Annotation guidelines")
    assert is_caption("Fig. 3 The apparatus")
    assert is_caption("FIGURE S2. Supplementary data")
    assert not is_caption("Tables of results follow.")


def test_a_real_paper_loses_its_plot_ticks_and_table_rows_and_keeps_its_captions() -> None:
    body = sectioned(read_pdf(LONGEVAL).lines)
    kept = without_debris(body)
    texts = {item.line.text for item in kept}
    dropped = [item.line.text for item in body if item.line.text not in texts]
    assert "0.2 0.0 0.2 0.4 0.6 0.8 1.0" in dropped
    assert "BM25 (1995) 0.38 0.46 0.56" in dropped
    assert not any(is_number_run(text) for text in texts)
    captions = [item.line.text for item in body if is_caption(item.line.text)]
    assert len(captions) >= 20 and all(caption in texts for caption in captions)
    # Prose is untouched: under one line in fifteen goes.
    assert len(dropped) < len(body) / 15
