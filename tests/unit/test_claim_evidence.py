"""The claim engine with the packaged encoder: evidence, ``addressed`` and offsets.

Each source stays under eight sentences, so every check is one call of the light
query encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from doiget.claims.encoder import default_encoder
from doiget.claims.evidence import assess
from doiget.claims.features import BLOCK, blocks
from doiget.claims.textunits import units_of_document, units_of_text
from doiget.claims.units import Unit
from doiget.documents.document import DocumentCache

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ABSTRACT = (
    "Hypertension is a leading cause of cardiovascular disease worldwide. "
    "We recruited 412 adults aged 60 to 80 from three clinics. "
    "Participants were randomised to supervised training or usual care for six months. "
    "Aerobic training lowered systolic blood pressure by 8 mmHg compared with usual care. "
    "Adverse events were rare and mild in both groups. "
    "Adherence was higher in clinics offering evening sessions."
)


def test_the_stated_sentence_ranks_first_with_offsets_into_the_text() -> None:
    units = units_of_text(ABSTRACT)
    result = assess("Aerobic training lowers systolic blood pressure in older adults.", units, None)
    best = result.evidence[0]
    assert "Aerobic training lowered systolic" in best.text
    assert best.role == "rationale"
    assert result.addressed in {"addressed", "partly"}
    assert 0.5 <= result.confidence <= 1.0
    assert len(result.evidence) <= 5
    for item in result.evidence:
        assert item.start is not None and item.end is not None
        assert ABSTRACT[item.start : item.end] == item.text
    scores = [item.score for item in result.evidence]
    assert scores == sorted(scores, reverse=True)


def test_a_paraphrase_is_found_through_meaning_not_shared_words() -> None:
    text = (
        "The pressure of each sample tube was checked before blood was drawn. "
        "Sleep duration was recorded with wrist actigraphy. "
        "Regular physical workouts reduced hypertension among elderly people. "
        "Blood pressure cuffs were calibrated monthly."
    )
    result = assess("Exercise lowers blood pressure in seniors.", units_of_text(text), None)
    assert result.evidence[0].text.startswith("Regular physical workouts")


def test_a_claim_resting_on_two_adjacent_sentences_is_one_evidence_item() -> None:
    text = (
        "Smoking rates remain high in psychiatric care. "
        "We enrolled 120 smokers with schizophrenia. "
        "In this group, varenicline doubled the quit rate at one year compared with placebo. "
        "Weight gain was similar in both arms. "
        "The trial was funded by a public grant."
    )
    claim = "Varenicline doubled one-year quit rates among smokers with schizophrenia."
    result = assess(claim, units_of_text(text), None)
    best = result.evidence[0]
    assert best.text.startswith("We enrolled 120") and best.text.endswith("with placebo.")
    assert text[best.start : best.end] == best.text
    assert best.role == "rationale"
    # Neither sentence shows up again on its own.
    assert all(
        "varenicline" not in item.text and "120" not in item.text for item in result.evidence[1:]
    )


@pytest.mark.parametrize(
    "claim",
    [
        "Dark matter halos of dwarf galaxies have cored density profiles.",
        "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    ],
)
def test_an_unrelated_source_is_not_addressed(claim: str) -> None:
    result = assess(claim, units_of_text(ABSTRACT), None)
    assert result.addressed == "not_addressed"
    assert result.confidence >= 0.5
    assert result.cues == []
    assert all(item.role == "context" for item in result.evidence)


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (
            "Aerobic training lowered systolic blood pressure by 18 mmHg in older adults.",
            {"number": ("18 mmHg", "8 mmHg")},
        ),
        (
            "Aerobic training raised systolic blood pressure in older adults.",
            {"direction": ("raised", "lowered")},
        ),
        (
            "Aerobic training lowers systolic blood pressure in mice.",
            {"population": ("mice", "Participants")},
        ),
        ("Aerobic training lowers systolic blood pressure in older adults.", {}),
    ],
)
def test_cues_compare_the_claim_with_the_evidence(
    claim: str, expected: dict[str, tuple[str, str]]
) -> None:
    result = assess(claim, units_of_text(ABSTRACT), None)
    assert result.addressed == "addressed"
    assert {cue.kind: (cue.claim_span, cue.source_span) for cue in result.cues} == expected


def test_no_units_address_nothing() -> None:
    result = assess("Anything at all.", [], None)
    assert (result.addressed, result.evidence, result.cues) == ("not_addressed", [], [])


@pytest.mark.parametrize(
    "text",
    [
        "  First sentence here.  Second one, after two spaces!\nThird on a new line? Yes.",
        "Dr. Smith et al. found 3.5 mg. The Café served crème brûlée. Fin.",
        "No stop at the end",
    ],
)
def test_text_units_map_back_to_the_text_exactly(text: str) -> None:
    units = units_of_text(text)
    assert units
    for unit in units:
        assert unit.start is not None and unit.end is not None
        assert text[unit.start : unit.end] == unit.text == unit.text.strip()
    assert [u.start for u in units] == sorted(u.start or 0 for u in units)


def test_a_papers_sentence_is_found_on_its_page_and_section_once_encoded() -> None:
    document = DocumentCache().load(FIXTURES / "pdf" / "openquestion-jose-paper.pdf")
    units = units_of_document(document)
    assert len(units) > BLOCK  # weighed block by block

    class Counting:
        texts = 0

        def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
            Counting.texts += len(texts)
            return default_encoder().encode(texts)

    encoder = Counting()
    stated = assess("OpenQuestion reports can be exported to HTML files.", units, encoder)
    best = stated.evidence[0]
    assert best.text.startswith("OpenQuestion allows reports")
    assert (best.page, best.section) == (3, "Interactive \u201ccode-free\u201d HTML reports")
    assert (best.start, best.end) == (None, None)
    assert stated.addressed == "addressed"
    encoded = Counting.texts
    denied = assess("OpenQuestion reports cannot be exported to HTML files.", units, encoder)
    # The paper's sentences are encoded once; the second claim costs one text.
    assert Counting.texts == encoded + 1
    assert denied.evidence[0].text == best.text
    assert [cue.kind for cue in denied.cues] == ["negation"]
    assert denied.cues[0].claim_span.startswith("cannot be exported")


def test_a_long_section_is_weighed_in_equal_blocks_that_never_cross_sections() -> None:
    units = [Unit(f"s{i}.", section="A") for i in range(3)] + [
        Unit(f"t{i}.", section="B") for i in range(2 * BLOCK + 1)
    ]
    found = blocks(units)
    assert found[0] == range(0, 3)
    sizes = [len(block) for block in found[1:]]
    assert len(sizes) == 3 and max(sizes) - min(sizes) <= 1
    assert [i for block in found for i in block] == list(range(len(units)))
    assert all(len({units[i].section for i in block}) == 1 for block in found)


def test_document_units_carry_page_and_section() -> None:
    document = DocumentCache().load(FIXTURES / "pdf" / "openquestion-jose-paper.pdf")
    units = units_of_document(document)
    need = next(u for u in units if u.section == "Statement of need")
    assert need.page == 1
    assert {u.page for u in units} >= {1, 2, 3}
    assert all(u.start is None for u in units)
    assert any(u.section == "Comparison to other survey development platforms" for u in units)
