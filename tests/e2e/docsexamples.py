"""Running the tool reference's example calls and comparing their results.

The examples live in docs/reference/examples/<group>.json, one file per group of calls
made in order in one ``doiget serve`` (so a fetch can come before the read of what it
fetched). Each group has a test module, tests/e2e/test_docs_examples_<group>.py, that
routes the replay upstream and prepares whatever files the calls name.

Paths differ between a test's temporary folders and a reader's machine, so a result is
compared and documented with the temporary folders written as the default locations of
a user called ``you`` (and arguments are read the other way round). Values that change
from call to call (``volatile``: timestamps, durations, random ids) are left out of the
comparison but shown as recorded; a volatile string a later call's arguments repeat (a
session id, say) is given to that call as this run's value.

To rewrite a group's results after an intended change, run its test with
DOIGET_WRITE_EXAMPLES=1 and review the diff, then ``python -m doiget.reference --write``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcputil import mcp_session, walked
from test_cli_mcp_parity import VOLATILE

from doiget.atomicfile import write_atomic
from doiget.reference import REGENERATE, example_groups, load_group

WRITE_VARIABLE = "DOIGET_WRITE_EXAMPLES"
DOCUMENTED_HOME = "/home/you"
# Where a user's own files (PDFs, bibliographies, manuscripts) sit in an example.
WORK = "work"


def documented_paths(base: Path) -> list[tuple[str, str]]:
    """(test path, documented path) for every folder ``isolated_env(base)`` uses."""
    share = f"{DOCUMENTED_HOME}/.local/share/doiget"
    return [
        (str(base / "papers"), f"{share}/papers"),
        (str(base / "data"), share),
        (str(base / "state"), f"{DOCUMENTED_HOME}/.local/state/doiget"),
        (str(base / "config.toml"), f"{DOCUMENTED_HOME}/.config/doiget/config.toml"),
        (str(base / "keys"), f"{DOCUMENTED_HOME}/.config/doiget/keys"),
        (str(base / WORK), f"{DOCUMENTED_HOME}/{WORK}"),
    ]


def _rewritten(value: Any, pairs: list[tuple[str, str]]) -> Any:
    """``value`` with each string's occurrences of each pair's first member replaced
    by its second."""
    return walked(value, text=lambda string: _replaced(string, pairs))


def _replaced(string: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        string = string.replace(old, new)
    return string


def steady(value: Any, volatile: frozenset[str]) -> Any:
    """``value`` without the keys whose values change from call to call."""
    return walked(value, dropped=volatile)


def _structured(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return [json.loads(block.text) for block in result.content if block.type == "text"]


async def _call(
    session: ClientSession, example: dict[str, Any], to_test: list[tuple[str, str]]
) -> Any:
    """``example``'s call made now, its arguments in test paths; its structured result."""
    result = await session.call_tool(example["tool"], _rewritten(example["arguments"], to_test))
    assert not result.is_error, f"{example['tool']}: {result.content}"
    return _structured(result)


async def check_group(
    group: str,
    env: dict[str, str],
    base: Path,
    *args: str,
    between: Callable[[int], None] | None = None,
) -> None:
    """Make ``group``'s calls in order in one ``doiget serve`` (``args`` added to its
    command line) and fail on any result that differs from the documented one.
    ``between(i)``, when given, runs before call ``i`` (to change what an upstream
    answers, say)."""
    assert group in example_groups(), f"no docs/reference/examples/{group}.json"
    spec = load_group(group)
    to_docs = documented_paths(base)
    to_test = [(new, old) for old, new in to_docs]
    volatile = VOLATILE | frozenset(spec.get("volatile", ()))
    results = []
    renewed: list[tuple[str, str]] = []
    async with mcp_session(env, *args, toolsets=spec["toolsets"]) as session:
        for index, example in enumerate(spec["examples"]):
            if between is not None:
                between(index)
            result = await _call(session, example, to_test + renewed)
            results.append(_rewritten(result, to_docs))
            renewed += _renewed(example.get("result"), result, volatile)
    for example, result in zip(spec["examples"], results, strict=True):
        assert str(base) not in json.dumps(result), (
            f"{example['tool']}'s result names a test folder not mapped in documented_paths"
        )
    if os.environ.get(WRITE_VARIABLE) == "1":
        _write(group, spec, results, renewed)
        return
    for example, result in zip(spec["examples"], results, strict=True):
        assert steady(result, volatile) == steady(example.get("result"), volatile), (
            f"{example['tool']}'s documented result in {group}.json is out of date: run "
            f"this test with {WRITE_VARIABLE}=1, review the diff, then {REGENERATE}. Now:\n"
            + json.dumps(result, indent=2, ensure_ascii=False)
        )


def _renewed(documented: Any, now: Any, volatile: frozenset[str]) -> list[tuple[str, str]]:
    """(documented, current) for each volatile string value, found by walking the
    documented result and this run's result side by side."""
    if isinstance(documented, dict) and isinstance(now, dict):
        pairs = []
        for key, value in documented.items():
            if key not in now:
                continue
            current = now[key]
            if key not in volatile:
                pairs += _renewed(value, current, volatile)
            elif isinstance(value, str) and isinstance(current, str) and value != current:
                pairs.append((value, current))
        return pairs
    if isinstance(documented, list) and isinstance(now, list):
        return [
            pair
            for old, new in zip(documented, now, strict=False)
            for pair in _renewed(old, new, volatile)
        ]
    return []


def _write(
    group: str, spec: dict[str, Any], results: list[Any], renewed: list[tuple[str, str]]
) -> None:
    """Write ``results`` into the group's file, and the arguments with this run's
    volatile values so that a call names the session its own result shows."""
    spec = {
        **spec,
        "examples": [
            {**example, "arguments": _rewritten(example["arguments"], renewed), "result": result}
            for example, result in zip(spec["examples"], results, strict=True)
        ],
    }
    text = json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    write_atomic(example_groups()[group], text.encode())
