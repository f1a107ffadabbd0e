"""Cues between a claim and its best evidence: each kind fires where they differ, and
stays silent where they agree."""

from __future__ import annotations

import pytest

from doiget.claims.cues import cues_between


def kinds(claim: str, source: str) -> dict[str, tuple[str, str]]:
    return {cue.kind: (cue.claim_span, cue.source_span) for cue in cues_between(claim, [source])}


@pytest.mark.parametrize(
    ("claim", "differs", "agrees", "spans"),
    [
        (
            "Smoking cessation lowered mortality by 40 % in the cohort.",
            "Smoking cessation lowered mortality by 14 % in the cohort.",
            "Smoking cessation lowered mortality by 40% in the cohort.",
            ("40 %", "14 %"),
        ),
        (
            "The trial enrolled 2 000 patients.",
            "The trial enrolled 200 patients.",
            "The trial enrolled 2,000 patients.",
            ("2 000", "200"),
        ),
        (
            "Expression rose 3-fold after treatment.",
            "Expression rose 2-fold after treatment.",
            "Expression rose 3 fold after treatment.",
            ("3-fold", "2-fold"),
        ),
        (
            "A dose of 5 mg daily was effective.",
            "A dose of 50 mg daily was effective.",
            "A dose of 5 mg daily, given for 12 weeks, was effective.",
            ("5 mg", "50 mg"),
        ),
        (
            "About 1.5 million people carry the variant.",
            "About 15 million people carry the variant.",
            "About 1,500,000 people carry the variant.",
            ("1.5 million", "15 million"),
        ),
    ],
)
def test_number_cue_names_both_numbers(
    claim: str, differs: str, agrees: str, spans: tuple[str, str]
) -> None:
    assert kinds(claim, differs)["number"] == spans
    assert "number" not in kinds(claim, agrees)


def test_numbers_of_other_kinds_or_inside_names_are_not_compared() -> None:
    # A percentage against a count, and the digits of IL-6 or COVID-19, say nothing.
    assert "number" not in kinds("Mortality fell by 40 %.", "Mortality fell in 120 patients.")
    assert "number" not in kinds("IL-6 rises in COVID-19.", "IL-1 rises in COVID-20 models.")


@pytest.mark.parametrize(
    ("claim", "differs", "agrees", "spans"),
    [
        (
            "Statins increase HDL levels.",
            "Statins decrease HDL levels.",
            "Statins increased HDL levels.",
            ("increase", "decrease"),
        ),
        (
            "Risk is higher in smokers.",
            "Risk is lower in smokers.",
            "Risk was higher among smokers.",
            ("higher", "lower"),
        ),
        (
            "Sleepers eat more sugar.",
            "Sleepers eat less sugar.",
            "Sleepers ate more sugar.",
            ("more", "less"),
        ),
        (
            "TP53 is upregulated in tumours.",
            "TP53 is down-regulated in tumours.",
            "TP53 is up-regulated in tumours.",
            ("upregulated", "down-regulated"),
        ),
        (
            "Exercise improves memory.",
            "Exercise worsens memory.",
            "Exercise improved memory.",
            ("improves", "worsens"),
        ),
        (
            "The drug inhibits growth.",
            "The drug promotes growth.",
            "The drug suppressed growth.",
            ("inhibits", "promotes"),
        ),
    ],
)
def test_direction_cue_names_the_opposed_words(
    claim: str, differs: str, agrees: str, spans: tuple[str, str]
) -> None:
    assert kinds(claim, differs)["direction"] == spans
    assert "direction" not in kinds(claim, agrees)


@pytest.mark.parametrize(
    ("differs", "agrees", "source_span"),
    [
        (
            "Vitamin D did not reduce fractures in the trial.",
            "Vitamin D reduced fractures in the trial.",
            "did not reduce fractures in the",
        ),
        (
            "There was no significant reduction in fractures.",
            "There was a significant reduction in fractures.",
            "no significant reduction in fractures",
        ),
        (
            "Vitamin D intake was not associated with fractures.",
            "Vitamin D intake was associated with fewer fractures.",
            "was not associated with fractures",
        ),
        (
            "Supplements failed to reduce fractures.",
            "Supplements helped to reduce fractures.",
            "failed to reduce fractures",
        ),
    ],
)
def test_negation_cue_when_the_source_denies(differs: str, agrees: str, source_span: str) -> None:
    claim = "Vitamin D reduces fractures."
    assert kinds(claim, differs)["negation"] == (claim, source_span)
    assert "negation" not in kinds(claim, agrees)


def test_negation_cue_when_the_claim_denies() -> None:
    claim = "Aspirin does not prevent migraine."
    assert kinds(claim, "Aspirin prevented migraine in most patients.")["negation"][0] == (
        "does not prevent migraine"
    )
    assert "negation" not in kinds(claim, "Aspirin did not prevent migraine.")


@pytest.mark.parametrize("hedge", ["may", "might", "could", "possibly", "suggests that it"])
def test_certainty_cue_when_the_source_hedges(hedge: str) -> None:
    claim = "Coffee protects the liver."
    found = kinds(claim, f"Coffee {hedge} protect the liver.")["certainty"]
    assert found[0] == claim and found[1].startswith(hedge.split()[0])
    assert "certainty" not in kinds(claim, "Coffee protected the liver.")
    # A claim that hedges as much as its source is not a cue.
    assert "certainty" not in kinds(
        "Coffee may protect the liver.", f"Coffee {hedge} protect the liver."
    )


@pytest.mark.parametrize(
    ("claim", "differs", "agrees", "spans"),
    [
        (
            "Metformin extends life in humans.",
            "Metformin extends life in mice.",
            "Metformin extends life in humans and mice.",
            ("humans", "mice"),
        ),
        (
            "The vaccine protects patients.",
            "The vaccine protected cultured cells in vitro.",
            "The vaccine protected patients.",
            ("patients", "cultured"),
        ),
        (
            "Fasting helps older adults.",
            "Fasting helped aged rats.",
            "Fasting helped older adults.",
            ("adults", "rats"),
        ),
        (
            "The compound shrinks tumours in mice.",
            "The compound shrank tumours in patients.",
            "The compound shrank tumours in mice.",
            ("mice", "patients"),
        ),
    ],
)
def test_population_cue_names_who_was_studied(
    claim: str, differs: str, agrees: str, spans: tuple[str, str]
) -> None:
    assert kinds(claim, differs)["population"] == spans
    assert "population" not in kinds(claim, agrees)


def test_agreeing_sentence_gives_no_cue() -> None:
    claim = "In 1 200 patients, statins lowered LDL by 30 %."
    assert (
        cues_between(claim, ["Among 1,200 patients statins lowered LDL cholesterol by 30%."]) == []
    )


def test_population_is_read_from_the_first_evidence_naming_anyone() -> None:
    claim = "Metformin extends life in humans."
    evidence = ["Lifespan rose by 8 %.", "We fed metformin to mice.", "Patients were not studied."]
    [cue] = cues_between(claim, evidence)
    assert (cue.kind, cue.claim_span, cue.source_span, cue.evidence) == (
        "population",
        "humans",
        "mice",
        1,
    )
    # The first item naming a population decides: here it studied humans.
    assert cues_between(claim, ["Lifespan rose.", "Patients took metformin.", "Mice too."]) == []


def test_other_cues_compare_the_best_evidence_only() -> None:
    [cue] = cues_between("X rose by 10 %.", ["X rose by 12 %.", "X fell by 10 %."])
    assert (cue.kind, cue.evidence) == ("number", 0)
    assert cues_between("X rose by 10 %.", []) == []
