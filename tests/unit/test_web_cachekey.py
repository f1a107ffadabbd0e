"""Cache keys: derived from the input schema, defaults filled, sessionId ignored."""

from __future__ import annotations

import re
from typing import Any

import pytest

from doiget.web.cachekey import CACHE_VERSION, NOT_RESULT_AFFECTING, cache_key

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "num_results": {"type": "integer", "default": 5},
        "safe": {"type": "string", "enum": ["off", "medium", "high"], "default": "medium"},
        "language": {"type": "string"},
        "sites": {"type": "array", "items": {"type": "string"}, "default": []},
        "extract": {"type": "boolean", "default": False},
        "options": {"type": "object", "default": {"depth": 1}},
        "sessionId": {"type": "string"},
    },
    "required": ["query"],
}

BASE: dict[str, Any] = {"query": "Coral Reef bleaching"}

# For every result-affecting property, a value that differs from its default (or,
# for properties without a default, from absence).
CHANGED: dict[str, Any] = {
    "query": "coral reef bleaching",
    "num_results": 6,
    "safe": "off",
    "language": "de",
    "sites": ["nature.com"],
    "extract": True,
    "options": {"depth": 2},
}


def test_key_shape() -> None:
    key = cache_key("web_search", BASE, SCHEMA)
    assert re.fullmatch(rf"web_search:{CACHE_VERSION}:[0-9a-f]{{64}}", key)


def test_explicit_defaults_and_absent_values_give_one_key() -> None:
    spelled_out = {
        name: spec["default"] for name, spec in SCHEMA["properties"].items() if "default" in spec
    }
    assert cache_key("web_search", BASE, SCHEMA) == cache_key(
        "web_search", {**BASE, **spelled_out}, SCHEMA
    )


def test_explicit_null_equals_absent_optional_without_default() -> None:
    assert cache_key("web_search", BASE, SCHEMA) == cache_key(
        "web_search", {**BASE, "language": None}, SCHEMA
    )


def test_argument_order_does_not_matter() -> None:
    forward = {"query": "q", "num_results": 3, "safe": "high"}
    backward = dict(reversed(list(forward.items())))
    assert cache_key("t", forward, SCHEMA) == cache_key("t", backward, SCHEMA)


def test_whole_float_equals_int() -> None:
    assert cache_key("t", {**BASE, "num_results": 7}, SCHEMA) == cache_key(
        "t", {**BASE, "num_results": 7.0}, SCHEMA
    )


def test_unknown_argument_raises() -> None:
    with pytest.raises(ValueError, match="nmu_results"):
        cache_key("web_search", {**BASE, "nmu_results": 3}, SCHEMA)


def test_session_id_does_not_affect_the_key() -> None:
    assert "sessionId" in NOT_RESULT_AFFECTING
    plain = cache_key("web_search", BASE, SCHEMA)
    assert cache_key("web_search", {**BASE, "sessionId": "s-1"}, SCHEMA) == plain
    assert cache_key("web_search", {**BASE, "sessionId": "s-2"}, SCHEMA) == plain


def test_session_id_is_accepted_when_the_schema_does_not_declare_it() -> None:
    schema = {"properties": {"query": {"type": "string"}}}
    assert cache_key("t", {"query": "q", "sessionId": "s"}, schema) == cache_key(
        "t", {"query": "q"}, schema
    )


def test_every_result_affecting_property_is_covered_by_this_test() -> None:
    assert set(CHANGED) == set(SCHEMA["properties"]) - NOT_RESULT_AFFECTING


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_property_change_changes_the_key(name: str) -> None:
    assert cache_key("web_search", BASE, SCHEMA) != cache_key(
        "web_search", {**BASE, name: CHANGED[name]}, SCHEMA
    )


def test_tool_name_is_part_of_the_key() -> None:
    assert cache_key("web_search", BASE, SCHEMA) != cache_key("scrape_page", BASE, SCHEMA)


def test_new_schema_property_changes_the_key() -> None:
    extended = {
        **SCHEMA,
        "properties": {**SCHEMA["properties"], "region": {"type": "string", "default": "eu"}},
    }
    assert cache_key("web_search", BASE, SCHEMA) != cache_key("web_search", BASE, extended)


def test_strings_are_not_normalised() -> None:
    keys = {cache_key("t", {"query": query}, SCHEMA) for query in ("Café", "café", "café ")}
    assert len(keys) == 3


def test_nan_is_refused() -> None:
    with pytest.raises(ValueError):
        cache_key("t", {**BASE, "options": {"x": float("nan")}}, SCHEMA)
