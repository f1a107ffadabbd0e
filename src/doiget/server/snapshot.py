"""The tools' JSON Schemas as generated from their contract models, kept in a file.

Generating a schema builds the model's validator, which costs milliseconds per
model; listing the tools from this file keeps ``doiget serve`` answering tools/list
as fast as a server with hand-written schemas, and the models are built on the
first call that needs them. A test regenerates the file's content and fails when
it differs, so the file cannot drift from the models; refresh it with
``python -m doiget.server.snapshot``.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from doiget.server.schema import input_schema, output_schema

SNAPSHOT: Final = Path(__file__).with_name("tool_schemas.json")


@functools.cache
def stored() -> dict[str, dict[str, Any]]:
    """Each tool's ``{"input": ..., "output": ...}`` schemas as last written."""
    if not SNAPSHOT.exists():
        return {}
    loaded: dict[str, dict[str, Any]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return loaded


def generated() -> dict[str, dict[str, Any]]:
    """Every typed tool's schemas, generated from its models now."""
    from doiget.config import KNOWN_TOOLSETS
    from doiget.runtime import load_runtime
    from doiget.server.app import build_toolsets
    from doiget.server.toolset import Tool

    with tempfile.TemporaryDirectory() as scratch:
        runtime = load_runtime(
            {
                "DOIGET_DATA_DIR": scratch,
                "DOIGET_CONFIG": str(Path(scratch) / "config.toml"),
                "DOIGET_TOOLSETS": ",".join(KNOWN_TOOLSETS),
            }
        )
        tools: Iterable[Any] = (
            tool for toolset in build_toolsets(runtime) for tool in toolset.tools
        )
        return {
            tool.name: {"input": input_schema(tool.request), "output": output_schema(tool.reply)}
            for tool in tools
            if isinstance(tool, Tool)
        }


def render(schemas: dict[str, dict[str, Any]]) -> str:
    """The file's text: one tool per line, so a change reads as a one-line diff."""
    lines = [
        f"{json.dumps(name)}: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}"
        for name, body in sorted(schemas.items())
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> None:
    """Rewrite the file from the models."""
    SNAPSHOT.write_text(render(generated()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
