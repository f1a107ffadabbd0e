"""Bibliographies built to cost far more to read than their size: what reading one
produces is bounded (macros, entries, records), so each is read or refused within a
bound on time and memory, and refused early with INVALID_REF where it must be.

The bounds are generous for a loaded machine; without them the nested macros would
never finish (2^40 characters), the big macro would give every entry 1.8 MB, and the
77,000-entry file took 51 s to parse before its refusal.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.verify.bibentries import MAX_ENTRY_CHARS, bib_entries
from doiget.verify.cited import CitedWork
from doiget.verify.inputs import MAX_TEXT_CHARS, read_text

SECONDS = 10.0
PEAK_BYTES = 64 * 1024 * 1024


def _outcome(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except DoigetError as error:
        return error


def _bounded(read: Callable[[], Any], *, memory: bool = True) -> Any:
    """What ``read`` returns (or the DoigetError it raises), held to the time bound and,
    read again under tracemalloc (which slows every allocation), to the memory bound."""
    started = time.perf_counter()
    outcome = _outcome(read)
    took = time.perf_counter() - started
    assert took < SECONDS, f"{took:.1f} s"
    if memory:
        tracemalloc.start()
        try:
            _outcome(read)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < PEAK_BYTES, f"{peak / 2**20:.0f} MiB"
    return outcome


def _doubling(levels: int, joiner: str = " # ") -> str:
    macros = ['@string{m0 = "' + "x" * 10 + '"}']
    macros += [f"@string{{m{i} = m{i - 1}{joiner}m{i - 1}}}" for i in range(1, levels)]
    return "\n".join(macros) + f"\n@article{{k, title = m{levels - 1}, year = 2020}}\n"


def _unreadable(works: Any) -> list[str | None]:
    assert isinstance(works, list)
    return [work.unreadable for work in works if isinstance(work, CitedWork)]


@pytest.mark.parametrize("joiner", [" # ", "#", "\n  #\n  "], ids=["spaced", "tight", "lines"])
def test_macros_doubling_on_each_other_stop_at_an_entrys_size(joiner: str) -> None:
    works = _bounded(lambda: read_text(_doubling(40, joiner), "x.bib"))
    [problem] = _unreadable(works)
    assert problem and f"more than {MAX_ENTRY_CHARS:,} characters" in problem


def test_a_big_macro_named_by_every_entry_leaves_each_entry_unread() -> None:
    big = "@string{big = {" + "Ann Other and " * 130_000 + "}}\n"  # 1.8 MB
    entries = "".join(f"@article{{k{i}, author = big, title = {{T{i}}}}}\n" for i in range(100))
    works = _bounded(lambda: read_text(big + entries, "x.bib"))
    problems = _unreadable(works)
    assert len(problems) == 100
    assert all(p and "the macro 'big' expands to more than" in p for p in problems)


def test_macros_that_expand_past_what_a_call_holds_are_refused() -> None:
    base = "@string{b = {" + "y" * 9_000 + "}}\n"
    many = "".join(f"@string{{c{i} = b # b}}\n" for i in range(100_000))[: MAX_TEXT_CHARS - 20_000]
    refused = _bounded(lambda: read_text(base + many + "@misc{k, title = c1}\n", "x.bib"))
    assert isinstance(refused, DoigetError) and refused.code is ErrorCode.INVALID_REF
    assert "@string macros expand to more than" in refused.message


def test_many_entries_each_within_its_size_are_read() -> None:
    macro = "@string{long = {" + "z" * 19_000 + "}}\n"
    entries = "".join(f"@misc{{k{i}, note = long, title = {{T}}}}\n" for i in range(100))
    works = _bounded(lambda: read_text(macro + entries, "x.bib"))
    assert _unreadable(works) == [None] * 100


@pytest.mark.parametrize(
    "text",
    [
        "".join(f"@a{{k{i},}}\n" for i in range(77_000)),
        "".join(f"@article{{k{i}, crossref = {{k{i + 1}}}}}\n" for i in range(60_000)),
        "@article{k0, title={T}}" * 80_000,
    ],
    ids=["tiny entries", "a crossref chain", "one line"],
)
def test_a_file_of_many_entries_is_refused_when_the_limit_is_passed(text: str) -> None:
    refused = _bounded(lambda: read_text(text, "x.bib"))
    assert isinstance(refused, DoigetError) and refused.code is ErrorCode.INVALID_REF
    assert "more than 100 references" in refused.message


def test_a_file_of_many_ris_records_is_refused_before_any_is_parsed() -> None:
    text = "TY  - JOUR\nTI  - T\nER  - \n" * 70_000
    refused = _bounded(lambda: read_text(text, "x.ris"))
    assert isinstance(refused, DoigetError) and "70000 RIS records" in refused.message


@pytest.mark.parametrize(
    "text",
    [
        "\n" * MAX_TEXT_CHARS,
        "@" * MAX_TEXT_CHARS,
        "@article{k, title = {" + "{" * 300_000 + "}" * 300_000 + "}}",
        "@article{k, title = " + "a # " * 400_000 + "a}",
        "@article{k, title = {x}\n" + "@" * 1_000_000,
        "@comment{" * 200_000,
        '@article(k, title = "' + "(" * 900_000 + '")',
        "@string{a = {x}}\n" * 100_000,
    ],
    ids=[
        "newlines",
        "at signs",
        "deep braces",
        "long concatenation",
        "open entry",
        "open comments",
        "parens",
        "one macro redefined",
    ],
)
def test_odd_texts_read_in_linear_time(text: str) -> None:
    _bounded(lambda: bib_entries(text), memory=False)


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ('@comment{a}\n@preamble{"b"}\n@string{c = {d}}\n@misc{k, title = c}\n', 1),
        ("@COMMENT{a}\n" * 150 + "@misc{k, title = {T}}\n" * 100, 100),
    ],
)
def test_comments_preambles_and_macros_are_not_entries(text: str, entries: int) -> None:
    found = bib_entries(text)
    assert len(found) == entries
    assert found[0].kind == "misc"
