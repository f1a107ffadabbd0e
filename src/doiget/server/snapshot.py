"""What tools/list and the server instructions say, generated from the tool declarations
and kept in a file.

Declaring the tools imports every toolset module and creates its contract models, and
generating a schema builds a model's validator: tens of milliseconds before the first
answer. The server instead lists the tools from this file and imports a toolset at its
first call. A test regenerates the content and fails when it differs, so the file
cannot drift from the declarations; refresh it with ``python -m doiget.server.snapshot``.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

SNAPSHOT: Final = Path(__file__).with_name("tool_listing.json")

# Per toolset: {"instructions": str, "tools": [tools/list entry, ...]}
Manifest = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Listing:
    """The selected toolsets' instructions and tools/list entries."""

    instructions: list[str]
    tools: list[dict[str, Any]]


@functools.cache
def stored() -> Manifest:
    """The manifest as last written (empty when there is no file)."""
    if not SNAPSHOT.exists():
        return {}
    loaded: Manifest = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return loaded


def listing(toolsets: Sequence[str]) -> Listing | None:
    """What the server lists for ``toolsets``; None when the file lacks one of them."""
    manifest = stored()
    if not all(name in manifest for name in toolsets):
        return None
    return Listing(
        [manifest[name]["instructions"] for name in toolsets],
        [entry for name in toolsets for entry in manifest[name]["tools"]],
    )


def listed_text(entry: dict[str, Any]) -> str:
    """What a model reads of one tools/list entry in every request: the object of its
    name, description and inputSchema as compact JSON (the output schema checks
    replies and the annotations are for the client, so neither is counted)."""
    read = {key: entry[key] for key in ("name", "description", "inputSchema")}
    return json.dumps(read, ensure_ascii=False, separators=(",", ":"))


def generated() -> Manifest:
    """Every toolset's instructions and tools/list entries, from the declarations now."""
    from doiget.config import KNOWN_TOOLSETS
    from doiget.runtime import load_runtime
    from doiget.server.app import build_toolsets, tool_entry

    with tempfile.TemporaryDirectory() as scratch:
        runtime = load_runtime(
            {
                "DOIGET_DATA_DIR": scratch,
                "DOIGET_CONFIG": str(Path(scratch) / "config.toml"),
                "DOIGET_TOOLSETS": ",".join(KNOWN_TOOLSETS),
            }
        )
        return {
            toolset.name: {
                "instructions": toolset.instructions,
                "tools": [
                    tool_entry(tool).model_dump(by_alias=True, exclude_none=True, mode="json")
                    for tool in toolset.tools
                ],
            }
            for toolset in build_toolsets(runtime, KNOWN_TOOLSETS)
        }


def render(manifest: Manifest) -> str:
    """The file's text: one tool per line, so a change reads as a one-line diff."""
    parts = []
    for name, toolset in manifest.items():
        tools = ",\n".join(
            json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
            for entry in toolset["tools"]
        )
        instructions = json.dumps(toolset["instructions"], ensure_ascii=False)
        parts.append(
            f'{json.dumps(name)}: {{"instructions": {instructions}, "tools": [\n{tools}\n]}}'
        )
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> None:
    """Rewrite the file from the declarations."""
    SNAPSHOT.write_text(render(generated()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
