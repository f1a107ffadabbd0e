"""Every export holds hostile text from outside (an unidentified PDF's file name as its
title, an upstream's metadata) within what its format can hold: RIS and the formatted
references fold it onto one line, BibTeX keeps its entries and braces whole, CSL-JSON
and JSON carry it exactly."""

from __future__ import annotations

import json
import re

import bibtexparser
import pytest
import rispy

from doiget.cite.bibtex import to_bibtex_many
from doiget.cite.csl import to_csl_many
from doiget.cite.formatted import render
from doiget.cite.ris import to_ris_many
from doiget.cite.styles import load_style, resolve_locale
from doiget.controls import one_line, visible
from doiget.models import Author, Work
from doiget.web import export

# Each way a value could end its line or start a record of its own, and what a
# terminal would act on.
BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"]
CONTROLS = ["\x00", "\x07", "\x1b]52;c;aGk=\x07", "\x1b[2J", "\x7f", "\x9b31m"]
RIS_FORGERY = "ER  - {}TY  - JOUR{}TI  - forged{}ER  - "
BIB_FORGERY = "{}@misc{{forged, title={{pwned}}}}{}}}}}{{ %"
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _works(title: str) -> list[Work]:
    return [
        Work(
            source="local-file",
            title=title,
            authors=(Author(family=f"Doe{title}", given="Jane"),),
            venue=f"Journal{title}",
            doi="10.1234/abc",
            year=2020,
        ),
        Work(source="crossref", title="The second record", year=2021),
    ]


@pytest.mark.parametrize("brk", BREAKS)
def test_ris_keeps_one_record_per_work_whatever_a_title_holds(brk: str) -> None:
    title = "A paper" + RIS_FORGERY.format(brk, brk, brk) + "".join(CONTROLS)
    for written in (
        to_ris_many(_works(title)),
        export.render("ris", {"sources": [{"title": title, "kind": "paper", "doi": "10.1/x"}]}),
    ):
        records = rispy.loads(written)
        lines = written.splitlines()
        assert sum(line.startswith("TY  - ") for line in lines) == len(records)
        assert sum(line.startswith("ER  - ") for line in lines) == len(records)
        assert all(re.fullmatch(r"[A-Z][A-Z0-9]  - .*", line) for line in lines if line), lines
        assert not RAW.search(written.replace("\n", ""))
        assert "TI  - forged" not in lines


@pytest.mark.parametrize("brk", BREAKS)
def test_bibtex_keeps_its_entries_and_values_on_their_lines(brk: str) -> None:
    title = "A paper" + BIB_FORGERY.format(brk, brk) + "".join(CONTROLS)
    written = to_bibtex_many(_works(title))
    parsed = bibtexparser.parse_string(written)
    assert len(parsed.entries) == 2 and parsed.entries[1].key == "anon2021second"
    assert parsed.entries[0]["title"].startswith("A paper")
    assert not parsed.failed_blocks
    assert sum(line.startswith("@") for line in written.splitlines()) == 2
    assert not RAW.search(written.replace("\n", "").replace("\t", ""))


@pytest.mark.parametrize("text_format", ["text", "html", "markdown"])
def test_formatted_references_stay_on_one_line(text_format: str) -> None:
    title = "A paper" + "".join(BREAKS) + "# Heading" + "\n- item" + "".join(CONTROLS)
    style = load_style("apa")
    rendered = render(_works(title), style, resolve_locale(None, style), text_format)  # type: ignore[arg-type]
    for _, entry in rendered.entries:
        assert not RAW.search(entry), entry


def test_markdown_session_export_stays_on_its_lines() -> None:
    title = "Found" + "".join(BREAKS) + "# Heading" + "".join(CONTROLS)
    written = export.render(
        "markdown",
        {"researchGoal": title, "steps": [], "sources": [{"title": title, "url": "https://x.org"}]},
    )
    assert not any(line.startswith("# Heading") for line in written.splitlines())
    assert not RAW.search(written.replace("\n", ""))


def test_csl_json_and_json_carry_the_text_exactly() -> None:
    title = "A paper" + "".join(BREAKS) + "".join(CONTROLS) + "\u202e"
    [item, _] = json.loads(json.dumps(to_csl_many(_works(title))))
    assert item["title"] == title
    written = export.render("json", {"sources": [{"title": title}]})
    assert json.loads(written)["sources"][0]["title"] == title


def test_one_line_folds_and_visible_escapes() -> None:
    assert one_line("a\nb\u2028c\x1bd\x85e\x9bf  g") == "a b c d e f g"
    assert visible("a\x1b[2J\tb\n\u202ec\x9b\x7f") == "a\\x1b[2J\tb\n\\u202ec\\x9b\\x7f"
