"""Every identifier is matched whole: a value with a trailing newline is refused.

Python's ``$`` also matches before a final newline, so ``re.match("^[a-z]+$",
"abc\\n")`` succeeds. Each pattern of every tool's inputSchema is tried through the
tool's own request model with a value it accepts, then with the same value and a
trailing newline; the Python-side id checks are tried likewise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from doiget.config import KNOWN_TOOLSETS
from doiget.errors import DoigetError
from doiget.runtime import load_runtime
from doiget.server.app import build_toolsets

# A value each anchored pattern accepts. A new pattern needs its example here.
EXAMPLES: dict[str, str] = {
    "^[0-9]{1,10}$": "29106400",
    r"^\d{1,4}(-\d{1,4})?$": "3-5",
    "^[A-HYa-hy][0-9]{2}([A-Za-z]( ?[0-9]{1,4}(/[0-9]{1,6})?)?)?$": "H01L21/02",
    r"^([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+$": "nature.com",
    "^[A-Za-z0-9_-]{1,100}$": "abc_123-x",
    "^[A-Za-z0-9_-]{1,40}$": "branch-2",
    "^[A-Za-z]{2}$": "us",
    "^[a-z]{2}$": "en",
}
# Patterns that check how a value starts, not what it is (a URL's scheme).
PREFIXES = {"^[Hh][Tt][Tt][Pp][Ss]?://"}
ENDINGS = ["\n", "\r\n", "\n\n"]


def _patterns(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(top-level property, is it a list) and pattern of every string pattern in a schema."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield path, node["pattern"]
        for key, value in node.items():
            if key == "properties" and not path:
                for name, child in value.items():
                    yield from _patterns(child, (name,))
            elif key == "items":
                yield from _patterns(value, (*path, "[]"))
            elif key in ("anyOf", "oneOf", "allOf"):
                for branch in value:
                    yield from _patterns(branch, path)


def _tools(tmp: Path) -> list[Any]:
    env = {
        "DOIGET_CONFIG": str(tmp / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp / "data"),
        "DOIGET_STORE_ROOT": str(tmp / "store"),
        "DOIGET_LOG_PATH": str(tmp / "log.jsonl"),
    }
    runtime = load_runtime(env)
    return [tool for toolset in build_toolsets(runtime, KNOWN_TOOLSETS) for tool in toolset.tools]


CASES = [
    (tool.name, tool.request, path, pattern)
    for tool in _tools(Path("/nonexistent-doiget-test-dir"))
    for path, pattern in _patterns(dict(tool.input_schema))
]


def _faults(model: type[BaseModel], name: str, value: Any) -> list[tuple[Any, ...]]:
    """The locations of the errors ``model`` finds in ``{name: value}`` that concern ``name``."""
    try:
        model.model_validate_json(json.dumps({name: value}))
    except ValidationError as failure:
        by_name = {info.alias or field: field for field, info in model.model_fields.items()}
        return [e["loc"] for e in failure.errors() if e["loc"][:1] in ((name,), (by_name[name],))]
    return []


def test_the_tools_have_patterns_to_check() -> None:
    assert len(CASES) >= 10
    assert {pattern for *_, pattern in CASES} <= set(EXAMPLES) | PREFIXES


@pytest.mark.parametrize("ending", ENDINGS, ids=repr)
@pytest.mark.parametrize(
    ("tool", "model", "path", "pattern"), CASES, ids=[f"{c[0]}.{'.'.join(c[2])}" for c in CASES]
)
def test_a_trailing_newline_fails_every_pattern(
    tool: str, model: type[BaseModel], path: tuple[str, ...], pattern: str, ending: str
) -> None:
    if pattern in PREFIXES:
        pytest.skip("a prefix pattern says nothing of the end")
    name, listed = path[0], "[]" in path
    good = EXAMPLES[pattern]
    assert not _faults(model, name, [good] if listed else good), (tool, name, good)
    bad = good + ending
    assert _faults(model, name, [bad] if listed else bad), (tool, name, bad)


@pytest.mark.parametrize("ending", ENDINGS, ids=repr)
def test_python_side_id_checks_match_whole(ending: str) -> None:
    from doiget.library.projects import PROJECT_ID, check_project_id
    from doiget.refs import parse_ref

    assert PROJECT_ID.fullmatch("lab/x") and not PROJECT_ID.fullmatch("lab/x" + ending)
    with pytest.raises(DoigetError):
        check_project_id("lab/x" + ending)
    # A pasted ref loses the white space around it; none is ever kept inside the id.
    for ref in ("10.1038/nature12373", "2401.12345", "hep-th/9901001"):
        assert parse_ref(ref + ending).canonical == parse_ref(ref).canonical
