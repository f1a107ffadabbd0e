"""The documentation's generated reference: commands, settings, MCP tools, error codes.

Each part is rendered from the code (the command tree, the settings declarations, the
tools/list snapshot, the error codes) and written between markers in its page under
docs/reference/, so the documentation cannot drift from the program: a test and CI
compare the two. Nothing here depends on the terminal width or the environment.

    python -m doiget.reference           # exit 1 and name the stale parts, if any
    python -m doiget.reference --print   # print every part
    python -m doiget.reference --write   # rewrite them in their pages
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doiget.atomicfile import write_atomic
from doiget.cli.reference import cli_reference_markdown, table_cell
from doiget.config import settings_table_markdown
from doiget.errors import MEANING, DoigetError
from doiget.server.snapshot import stored

REGENERATE = "python -m doiget.reference --write"
DOCS = Path(__file__).resolve().parents[2] / "docs"
REFERENCE = DOCS / "reference"
GUIDES = DOCS / "guides"
_EXAMPLE_MARKER = re.compile(r"<!-- generated: (example of ([a-z_]+)) \(")
# Example calls with their results, a file per group of calls made in order in one
# server; tests/e2e/test_docs_examples_<group>.py runs each group against the replay
# upstream, so a changed result fails there.
EXAMPLES = REFERENCE / "examples"
# A result longer than this many lines is shown folded: the page stays one to scan.
OPEN_RESULT_LINES = 60


@dataclass(frozen=True, slots=True)
class Section:
    """A generated part of a page and the marker name that fences it."""

    name: str
    text: str
    page: Path

    @property
    def start(self) -> str:
        return f"<!-- generated: {self.name} ({REGENERATE}) -->"

    @property
    def end(self) -> str:
        return f"<!-- end generated: {self.name} -->"


def tools_reference_markdown() -> str:
    """Every MCP tool by toolset, as tools/list gives it: name, description,
    annotations, input and output schema."""
    examples = documented_examples()
    blocks = []
    for toolset, manifest in stored().items():
        blocks.append(f"## `{toolset}`")
        blocks += [_tool_block(tool, examples.get(tool["name"])) for tool in manifest["tools"]]
    return "\n\n".join(blocks)


def example_groups() -> dict[str, Path]:
    """Each group of example calls by name, from its file's name."""
    return {path.stem: path for path in sorted(EXAMPLES.glob("*.json"))}


def load_group(name: str) -> dict[str, Any]:
    """A group: the ``toolsets`` its server serves, the ``volatile`` keys left out of
    comparisons, and its ``examples`` (tool, arguments, result) in call order."""
    group: dict[str, Any] = json.loads(example_groups()[name].read_text(encoding="utf-8"))
    return group


def documented_examples() -> dict[str, dict[str, Any]]:
    """Each tool's first example call, whichever group it is in."""
    examples: dict[str, dict[str, Any]] = {}
    for name in example_groups():
        for example in load_group(name)["examples"]:
            examples.setdefault(example["tool"], example)
    return examples


def errors_reference_markdown() -> str:
    """Every error code with what it means, what to do next and the CLI exit status."""
    lines = ["| code | what happened | what to do next | exit status |", "|---|---|---|---|"]
    for code, (meaning, next_step) in MEANING.items():
        status = DoigetError(code, "").exit_status
        lines.append(f"| `{code}` | {table_cell(meaning)} | {table_cell(next_step)} | {status} |")
    return "\n".join(lines)


def sections() -> list[Section]:
    """The documentation's generated parts, rendered now."""
    return [
        Section("cli-reference", cli_reference_markdown(), REFERENCE / "cli.md"),
        Section("settings", settings_table_markdown(), REFERENCE / "settings.md"),
        Section("mcp-tools", tools_reference_markdown(), REFERENCE / "tools.md"),
        Section("error-codes", errors_reference_markdown(), REFERENCE / "errors.md"),
        Section("verify-example", verify_example_markdown(), GUIDES / "verify-and-audit.md"),
        Section("audit-example", audit_example_markdown(), GUIDES / "verify-and-audit.md"),
        *guide_examples(),
    ]


def guide_examples() -> list[Section]:
    """The tested example of each tool a guide shows, where its page has the markers
    ``<!-- generated: example of TOOL (...) -->`` and its end."""
    found = []
    for page in sorted(GUIDES.glob("*.md")):
        for name, tool in _EXAMPLE_MARKER.findall(_read(page)):
            found.append(Section(name, tool_example_markdown(tool), page))
    return found


def tool_example_markdown(tool: str) -> str:
    """``tool``'s tested example: the call, and its result folded."""
    example = documented_examples()[tool]
    call = json.dumps(example["arguments"], indent=2, ensure_ascii=False)
    lines = [f"`{tool}` called with", "", "```json", call, "```"]
    lines += _folded(
        "example", "gives (run against the replay upstream by the tests)", example["result"]
    )
    return "\n".join(lines)


def verify_example_markdown() -> str:
    """The tested example of doiget_verify_references: its references and its rows
    (each verified row's corrected entries left out: they repeat the match)."""
    example = documented_examples()["doiget_verify_references"]
    rows = [
        {key: value for key, value in row.items() if key != "corrected"}
        for row in example["result"]["results"]
    ]
    references = "\n\n".join(example["arguments"]["references"])
    return "\n".join(
        [
            "```text",
            references,
            "```",
            "",
            "gives (each row's `corrected` BibTeX and CSL-JSON left out here):",
            "",
            "```json",
            json.dumps(rows, indent=2, ensure_ascii=False),
            "```",
        ]
    )


def audit_example_markdown() -> str:
    """The Markdown report of the tested doiget_audit_manuscript example."""
    from doiget.claims.audit_contracts import AuditReport
    from doiget.claims.report.markdown import as_markdown

    result = documented_examples()["doiget_audit_manuscript"]["result"]
    return "```markdown\n" + as_markdown(AuditReport.model_validate(result)).rstrip() + "\n```"


def _tool_block(tool: dict[str, Any], example: dict[str, Any] | None) -> str:
    annotations = tool.get("annotations") or {}
    lines = [f"### `{tool['name']}`", "", "```text", tool["description"], "```"]
    if annotations:
        lines += [
            "",
            "Annotations: " + ", ".join(f"`{k}: {json.dumps(v)}`" for k, v in annotations.items()),
        ]
    for label, key in (("Input schema", "inputSchema"), ("Output schema", "outputSchema")):
        if key in tool:
            lines += _folded("note", label, tool[key])
    if example is not None:
        lines += _folded(
            "example",
            "Example call, run against the replay upstream by the tests",
            example["arguments"],
            opened=True,
        )
        result = example["result"]
        short = len(json.dumps(result, indent=2).splitlines()) <= OPEN_RESULT_LINES
        lines += _folded("example", "Its result", result, opened=short)
    return "\n".join(lines)


def _folded(kind: str, title: str, value: Any, *, opened: bool = False) -> list[str]:
    """A collapsible block showing ``value``: a string as text, anything else as JSON."""
    language, text = (
        ("text", value)
        if isinstance(value, str)
        else ("json", json.dumps(value, indent=2, ensure_ascii=False))
    )
    marker = "???+" if opened else "???"
    block = ["", f'{marker} {kind} "{title}"', "", f"    ```{language}"]
    return block + [f"    {line}".rstrip() for line in text.splitlines()] + ["    ```"]


def replaced(page: str, section: Section) -> str:
    """``page`` with ``section``'s fenced part rewritten; ValueError without markers."""
    start, end = page.find(section.start), page.find(section.end)
    if start < 0 or end < start:
        raise ValueError(f"{section.page.name} lacks the markers of the {section.name} part")
    return page[: start + len(section.start)] + f"\n{section.text}\n" + page[end:]


def stale(rendered: list[Section] | None = None) -> list[str]:
    """Names of the generated parts whose page differs from what the code renders now."""
    return [
        section.name
        for section in (sections() if rendered is None else rendered)
        if replaced(_read(section.page), section) != _read(section.page)
    ]


def _read(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def write(rendered: list[Section]) -> None:
    """Rewrite every part in its page (temp file, fsync, rename)."""
    for section in rendered:
        write_atomic(section.page, replaced(_read(section.page), section).encode())


def main(argv: list[str] | None = None) -> int:
    """Check (default), ``--print`` or ``--write`` the generated parts."""
    args = sys.argv[1:] if argv is None else argv
    rendered = sections()
    if args == ["--print"]:
        for section in rendered:
            print(f"{section.start}\n{section.text}\n{section.end}\n")
        return 0
    if args == ["--write"]:
        write(rendered)
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    names = stale(rendered)
    if names:
        print(f"docs/reference is stale ({', '.join(names)}); run: {REGENERATE}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
