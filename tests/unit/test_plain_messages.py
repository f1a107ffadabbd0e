"""Every refusal of bad input is said in plain words: no regular expression, for
every field of every tool's input that is checked against one."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
from pydantic import BaseModel

from doiget.contract import Request, parse
from doiget.errors import DoigetError

CONTRACT_MODULES = (
    "doiget.papers.contracts",
    "doiget.scholar.contracts",
    "doiget.library.contracts",
    "doiget.web.requests",
    "doiget.contract",
)
REGEX_DEBRIS = re.compile(r"\^|\$'|\\[dswbAZ]|\[\^?[A-Za-z0-9]-|\(\?:")


def _requests() -> list[type[Request]]:
    for name in CONTRACT_MODULES:
        importlib.import_module(name)
    found: list[type[Request]] = []
    pending: list[type[Any]] = [Request]
    while pending:
        model = pending.pop()
        for sub in model.__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found


def _patterned_fields(model: type[BaseModel]) -> list[str]:
    schema = model.model_json_schema(by_alias=True)
    names = []
    for name, prop in schema.get("properties", {}).items():
        if "pattern" in prop:
            names.append(name)
        items = prop.get("items", {})
        if isinstance(items, dict) and "pattern" in items:
            names.append(name)
    return names


CASES = [
    (model, field)
    for model in _requests()
    if not model.__name__.startswith("_")
    for field in _patterned_fields(model)
]


def test_there_are_patterned_fields_to_check() -> None:
    # Refs are read by the ref parser, not a pattern (tests/e2e/test_mcp_refs.py).
    assert len(CASES) >= 4


@pytest.mark.parametrize(("model", "field"), CASES, ids=[f"{m.__name__}.{f}" for m, f in CASES])
def test_a_value_that_misses_a_pattern_is_refused_in_words(
    model: type[Request], field: str
) -> None:
    schema = model.model_json_schema(by_alias=True)["properties"][field]
    bad: Any = "\u2603 not valid \u2603"
    if schema.get("type") == "array" or "items" in schema:
        bad = [bad]
    with pytest.raises(DoigetError) as caught:
        parse(model, {field: bad})
    message = caught.value.message
    mine = [part for part in message.split("; ") if part.startswith(field)]
    assert mine, message
    assert not REGEX_DEBRIS.search(" ".join(mine)), message
