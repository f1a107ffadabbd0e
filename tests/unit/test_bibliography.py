"""A paper's reference list is found and split into one entry each, whatever the
layout tells entries apart with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from doiget.documents.bibliography import reference_entries
from doiget.documents.pdftext import read_pdf

from pdfmaker import write_manuscript_pdf, write_sectioned_pdf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"

ENTRIES = [
    "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, Aidan N. Gomez, "
    "Lukasz Kaiser, and Illia Polosukhin. 2017. Attention is all you need. In Advances in "
    "Neural Information Processing Systems 30, pages 5998-6008.",
    "Kaiming He, Xiangyu Zhang, Shaoqing Ren, and Jian Sun. 2016. Deep residual learning for "
    "image recognition. In Proceedings of the IEEE Conference on Computer Vision and Pattern "
    "Recognition, pages 770-778. https://doi.org/10.1109/CVPR.2016.90",
    "Diederik P. Kingma and Jimmy Ba. 2015. Adam: A method for stochastic optimization. "
    "In 3rd International Conference on Learning Representations. Vol. 12. 2015.",
    "Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019. BERT: "
    "Pre-training of deep bidirectional transformers for language understanding. In "
    "Proceedings of NAACL-HLT, pages 4171-4186.",
]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.mark.parametrize("style", ["numbered", "hanging", "flush"])
def test_every_entry_comes_back_whole_in_order(tmp_path: Path, style: str) -> None:
    path = tmp_path / f"{style}.pdf"
    write_manuscript_pdf(path, ENTRIES, style=style, appendix="Proofs of every claim. " * 8)
    found = reference_entries(read_pdf(path).lines)
    assert [_words(entry.text) for entry in found] == [_words(entry) for entry in ENTRIES]
    assert {entry.page for entry in found} == {1}
    labels = [f"[{n}]" for n in range(1, len(ENTRIES) + 1)] if style == "numbered" else None
    assert [entry.label for entry in found] == (labels or [None] * len(ENTRIES))


def test_a_two_column_list_with_hanging_indents_across_pages() -> None:
    found = reference_entries(read_pdf(FIXTURES / "acl-2023.eacl-main.121-longeval.pdf").lines)
    assert len(found) == 66
    assert found[0].text.startswith("Nader Akoury, Shufan Wang, Josh Whiting, Stephen Hood,")
    assert found[0].text.endswith("Association for Computational Linguistics.")
    assert found[-1].text.startswith("Tianyi Zhang, Varsha Kishore, Felix Wu,")
    assert "Bertscore: Evaluating text generation with bert." in found[-1].text
    # Each entry is one work: one year of publication, nothing cut off or run together.
    for entry in found:
        assert len(re.findall(r"\b(?:19|20)\d\d[a-z]?\. ", entry.text + " ")) >= 1, entry
        assert not re.search(r"\. (?:19|20)\d\d\. .*\. (?:19|20)\d\d\. ", entry.text), entry
    assert [entry.page for entry in found] == sorted(entry.page for entry in found)


def test_footers_and_footnotes_inside_the_list_are_left_out() -> None:
    found = reference_entries(read_pdf(FIXTURES / "openquestion-jose-paper.pdf").lines)
    assert [entry.text.split(",")[0] for entry in found] == [
        "Harris",
        "Kluyver",
        "LimeSurvey Project Team / Carsten Schmitz. (2012). LimeSurvey: An open source survey "
        "tool. LimeSurvey Project. http://www.limesurvey.org",
        "Luff",
        "Pyle",
        "Satyanarayan",
    ]
    assert not any("Mickey Mouse" in entry.text or "Note that" in entry.text for entry in found)
    assert "https://github.com/anvil-works/anvil-runtime" in found[3].text
    assert [entry.page for entry in found] == [3, 3, 3, 4, 4, 4]


def test_a_list_set_flush_with_no_gaps_is_split_at_each_author(tmp_path: Path) -> None:
    sectioned = write_sectioned_pdf(tmp_path / "sectioned.pdf")
    found = reference_entries(read_pdf(sectioned.path).lines)
    assert [entry.text.split(",")[0] for entry in found] == [
        "Aalto",
        "Dubois",
        "Okonkwo",
        "Peltonen",
        "Whitfield",
    ]


def test_a_paper_without_a_reference_list_has_no_entries() -> None:
    lines = read_pdf(FIXTURES / "paperqa-duplicate_media.pdf").lines
    assert reference_entries(lines) == []
