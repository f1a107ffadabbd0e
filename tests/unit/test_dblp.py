"""DBLP's publication search answers, as recorded, parsed into works."""

from __future__ import annotations

import json
from pathlib import Path

from doiget.sources.dblp import parse_hits, person_name

DBLP = Path(__file__).resolve().parent.parent / "fixtures" / "dblp"


def _load(name: str) -> object:
    return json.loads((DBLP / name).read_text(encoding="utf-8"))


def test_the_full_envelope_gives_its_hit_with_disambiguation_numbers_dropped() -> None:
    [work] = parse_hits(_load("search-publ-q-attention-is-all-you-need-h1.json"))
    assert work.title == (
        "Attentional Transfer is All You Need: Technology-aware Layout Pattern Generation"
    )
    assert work.authors[0].display == "Xiaopeng Zhang"
    assert work.doi == "10.1109/dac18074.2021.9586227"
    assert (work.year, work.venue, work.type) == (2021, "DAC", "paper-conference")
    assert work.extra["dblp_key"] == "conf/dac/ZhangYY21"


def test_a_corr_record_carries_its_arxiv_id_and_a_proceedings_record_none() -> None:
    paper, preprint = parse_hits(_load("search-publ-q-chain-of-thought-prompting-h5-hitlist.json"))
    assert (paper.venue, paper.type, paper.arxiv_id) == ("NeurIPS", "paper-conference", None)
    assert (preprint.venue, preprint.type, preprint.arxiv_id) == ("CoRR", "article", "2201.11903")
    assert [a.family for a in preprint.authors][-2:] == ["Le", "Zhou"]


def test_a_single_author_given_as_an_object_is_read() -> None:
    works = parse_hits(
        _load(
            "search-publ-q-approximation-by-superpositions-of-a-sigmoidal-function-h5-"
            "hitlist-single-author.json"
        )
    )
    cybenko = [w for w in works if w.extra["dblp_key"] == "journals/mcss/Cybenko92"]
    assert [a.display for a in cybenko[0].authors] == ["George Cybenko"]


def test_an_empty_hit_list_and_an_envelope_without_hits_give_nothing() -> None:
    assert (
        parse_hits(
            _load(
                "search-publ-q-highly-accurate-protein-structure-prediction-"
                "with-alphafold-h5-hitlist-empty.json"
            )
        )
        == []
    )
    empty = {"result": {"hits": {"@total": "0", "@computed": "0", "@sent": "0"}}}
    assert parse_hits(empty) == []


def test_person_names_lose_only_a_trailing_four_digit_number() -> None:
    assert person_name("Wei Wang 0001") == "Wei Wang"
    assert person_name("Quoc Le 0001") == "Quoc Le"
    assert person_name("Louis XIV 1638x") == "Louis XIV 1638x"
