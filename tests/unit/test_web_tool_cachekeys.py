"""Every result-affecting parameter of every cached web tool changes its cache key.

The values below are a second, valid value for each parameter. The test fails when a
tool gains a parameter this table does not know, so a new parameter cannot be added
without being proven part of the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from doiget.contract import parse
from doiget.server.web_tools import web_toolset
from doiget.web.cachekey import NOT_RESULT_AFFECTING, request_key

BASE: dict[str, dict[str, Any]] = {
    "web_search": {"query": "graphene conductivity"},
    "scrape_page": {"url": "https://blog.example.org/post"},
    "patent_search": {"query": "tactile robotic hand"},
    "academic_search": {"query": "coral bleaching"},
}
CHANGED: dict[str, dict[str, Any]] = {
    "web_search": {
        "query": "graphene conductivity 2024",
        "num_results": 9,
        "time_range": "week",
        "safe": "off",
        "language": "de",
        "site": "nature.com",
        "exact_terms": "sheet resistance",
        "exclude_terms": "battery",
        "country": "de",
        "lens": "science",
        "provider": "brave",
        "claim": "graphene conducts better than copper",
    },
    "scrape_page": {
        "url": "https://blog.example.org/other",
        "mode": "raw",
        "max_length": 1234,
    },
    # inventor and the years were once left out of a patent cache key elsewhere.
    "patent_search": {
        "query": "tactile robotic finger",
        "num_results": 9,
        "search_type": "landscape",
        "patent_office": "EP",
        "assignee": "Acme",
        "inventor": "Road Runner",
        "cpc_code": "B25J",
        "year_from": 2015,
        "year_to": 2020,
        "provider": "epo",
    },
    "academic_search": {
        "query": "coral bleaching recovery",
        "num_results": 8,
        "year_from": 2010,
        "year_to": 2020,
        "source": "pubmed",
        "open_access": True,
        "pdf_only": True,
        "sort_by": "date",
        "provider": "crossref",
    },
}


def _tools() -> dict[str, Mapping[str, Any]]:
    toolset = web_toolset(runtime=None)  # type: ignore[arg-type]  # schemas need no runtime
    return {spec.name: spec.input_schema for spec in toolset.tools if spec.name in BASE}


def _key(tool: str, arguments: dict[str, Any]) -> str:
    """The key of the call ``tool(arguments)``, read through the tool's own contract."""
    toolset = web_toolset(runtime=None)  # type: ignore[arg-type]
    request = next(spec.request for spec in toolset.tools if spec.name == tool)
    return request_key(tool, parse(request, arguments))


def test_every_cached_tool_is_covered() -> None:
    assert set(_tools()) == set(BASE)


@pytest.mark.parametrize("tool", sorted(BASE))
def test_table_knows_every_parameter(tool: str) -> None:
    schema = _tools()[tool]
    keyed = set(schema["properties"]) - NOT_RESULT_AFFECTING
    assert set(CHANGED[tool]) == keyed, "add the new parameter to CHANGED and to the key"


@pytest.mark.parametrize(
    ("tool", "name"), [(tool, name) for tool, values in CHANGED.items() for name in values]
)
def test_changing_a_parameter_changes_the_key(tool: str, name: str) -> None:
    schema = _tools()[tool]
    changed = {**BASE[tool], name: CHANGED[tool][name]}
    Draft202012Validator(schema).validate(changed)  # the second value is a valid input
    assert _key(tool, changed) != _key(tool, BASE[tool])


@pytest.mark.parametrize("tool", sorted(BASE))
def test_session_id_and_explicit_defaults_do_not_change_the_key(tool: str) -> None:
    schema = _tools()[tool]
    defaults = {
        name: spec["default"] for name, spec in schema["properties"].items() if "default" in spec
    }
    assert defaults
    plain = _key(tool, BASE[tool])
    assert _key(tool, {**BASE[tool], **defaults}) == plain
    assert _key(tool, {**BASE[tool], "sessionId": "s-1"}) == plain
    assert plain.startswith(f"{tool}:v1:")
