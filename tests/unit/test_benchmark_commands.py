"""The benchmark commands the README and the documentation show name scripts of
benchmarks/ and options those scripts take, and the Benchmarks page names every
benchmark, so a renamed script or option cannot leave a command nobody can run."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
PAGE = ROOT / "docs" / "benchmarks.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"benchmarks/(\w+)\.py((?:[ \t]+[^\s#`]+)*)")
# Added to every benchmark's parser by benchmarks/smoke.py.
_COMMON_OPTIONS = {"--smoke", "--help"}


def commands(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each benchmark command in ``text``'s sh blocks (continued lines joined, comments
    cut) and code spans: the script's name and the options it is given."""
    blocks = [block.replace("\\\n", " ") for block in _SH_BLOCK.findall(text)]
    spans = _CODE_SPAN.findall(_SH_BLOCK.sub("", text))
    for code in [*blocks, *spans]:
        for line in code.splitlines():
            for script, rest in _COMMAND.findall(line.split(" #")[0]):
                options = [word.split("=")[0] for word in rest.split() if word.startswith("--")]
                yield script, options


def problems(text: str) -> list[str]:
    """The scripts ``text`` names that benchmarks/ lacks, and the options a script is
    given that its parser does not declare."""
    found = []
    for script, options in commands(text):
        path = BENCHMARKS / f"{script}.py"
        if not path.is_file():
            found.append(f"benchmarks/{script}.py does not exist")
            continue
        source = path.read_text(encoding="utf-8")
        found += [
            f"benchmarks/{script}.py has no option {option}"
            for option in options
            if option not in _COMMON_OPTIONS and f'"{option}"' not in source
        ]
    return found


def test_every_benchmark_command_shown_names_a_script_and_its_options() -> None:
    shown = [page for page in PAGES if any(commands(page.read_text(encoding="utf-8")))]
    assert PAGE in shown
    found = {
        f"{page.relative_to(ROOT)}: {problem}"
        for page in shown
        for problem in problems(page.read_text(encoding="utf-8"))
    }
    assert not found, sorted(found)


def test_a_missing_script_or_option_is_named() -> None:
    text = (
        "```sh\n"
        ".venv/bin/python benchmarks/batch_rate.py --dois 5 --smoke  # --not-read\n"
        ".venv/bin/python benchmarks/http_load.py --entries 10 \\\n"
        "    --no-such-option=3\n"
        "```\n"
        "Run `python benchmarks/gone.py --dois 1` or `benchmarks/batch_rate.py --latency=1`.\n"
    )
    assert problems(text) == [
        "benchmarks/http_load.py has no option --no-such-option",
        "benchmarks/gone.py does not exist",
    ]


def test_the_benchmarks_page_names_every_benchmark() -> None:
    page = PAGE.read_text(encoding="utf-8")
    scripts = [
        path.name
        for path in sorted(BENCHMARKS.glob("*.py"))
        if "from smoke import" in path.read_text(encoding="utf-8")
    ]
    assert len(scripts) > 10
    missing = [name for name in scripts if f"benchmarks/{name}" not in page]
    assert not missing, f"docs/benchmarks.md does not name {missing}"
