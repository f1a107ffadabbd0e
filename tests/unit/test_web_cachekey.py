"""Cache keys: every field of the typed request, defaults filled, sessionId ignored."""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
from pydantic import Field

from doiget.contract import Request, parse
from doiget.web.cachekey import CACHE_VERSION, NOT_RESULT_AFFECTING, request_key


class Sample(Request):
    """A request with a field of every kind a web tool takes."""

    query: str
    num_results: int = 5
    safe: Literal["off", "medium", "high"] = "medium"
    language: str | None = None
    sites: list[str] = Field(default_factory=list)
    extract: bool = False
    options: dict[str, int] = Field(default_factory=lambda: {"depth": 1})
    session_id: str | None = Field(default=None, alias="sessionId")


class Extended(Sample):
    """The same request after a new field was added to the contract."""

    region: str = "eu"


BASE: dict[str, Any] = {"query": "Coral Reef bleaching"}

# For every result-affecting field, a value that differs from its default (or, for
# fields without a default, from absence).
CHANGED: dict[str, Any] = {
    "query": "coral reef bleaching",
    "num_results": 6,
    "safe": "off",
    "language": "de",
    "sites": ["nature.com"],
    "extract": True,
    "options": {"depth": 2},
}


def key(arguments: dict[str, Any], tool: str = "web_search", model: type[Sample] = Sample) -> str:
    return request_key(tool, parse(model, arguments))


def test_key_shape() -> None:
    assert re.fullmatch(rf"web_search:{CACHE_VERSION}:[0-9a-f]{{64}}", key(BASE))


def test_explicit_defaults_and_absent_values_give_one_key() -> None:
    spelled_out = {
        "num_results": 5,
        "safe": "medium",
        "sites": [],
        "extract": False,
        "options": {"depth": 1},
    }
    assert key(BASE) == key({**BASE, **spelled_out})


def test_explicit_null_equals_absent_optional_without_default() -> None:
    assert key(BASE) == key({**BASE, "language": None})


def test_argument_order_does_not_matter() -> None:
    forward = {"query": "q", "num_results": 3, "safe": "high"}
    assert key(forward) == key(dict(reversed(list(forward.items()))))


def test_session_id_does_not_affect_the_key() -> None:
    assert "sessionId" in NOT_RESULT_AFFECTING
    plain = key(BASE)
    assert key({**BASE, "sessionId": "s-1"}) == plain
    assert key({**BASE, "sessionId": "s-2"}) == plain


def test_every_result_affecting_field_is_covered_by_this_test() -> None:
    wire_names = {field.alias or name for name, field in Sample.model_fields.items()}
    assert set(CHANGED) == wire_names - NOT_RESULT_AFFECTING


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_field_change_changes_the_key(name: str) -> None:
    assert key(BASE) != key({**BASE, name: CHANGED[name]})


def test_tool_name_is_part_of_the_key() -> None:
    assert key(BASE) != key(BASE, tool="scrape_page")


def test_a_new_field_of_the_contract_changes_the_key() -> None:
    assert key(BASE) != key(BASE, model=Extended)


def test_strings_are_not_normalised() -> None:
    assert len({key({"query": query}) for query in ("Café", "café", "café ")}) == 3
