"""Text from a PDF (its body, its file name as the title of an unidentified paper) and
from a reference list reaches people through the commands' human output with every
control character shown as an escape, never obeyed by the terminal and never read as
rich markup; ``--json`` keeps the exact text, and a RIS export keeps one record."""

from __future__ import annotations

import json
import re
from pathlib import Path

from webpages import BRAVE

from cliutil import doiget
from pdfmaker import write_blank_pdf, write_lines_pdf
from replay import ReplayUpstream, Reply

# Clipboard write (OSC 52), clear screen, a planted link (OSC 8), a colour (CSI), the
# one-byte CSI (C1), a right-to-left override, rich markup, a forged RIS record (a
# file name holds no slash).
NAME = (
    "evil \x1b]52;c;aGk=\x07 \x1b[2J \x1b]8;;mailto:x@evil.example\x1b\\link\x1b]8;;\x1b\\ "
    "\x9b31m \u202eRLO\u202c \u2066iso\u2069 \x7f [bold red]x\nER  - \nTY  - JOUR"
)
BODY = [
    "Abstract",
    "A body line \x1b]52;c;aGk=\x07 then \x1b[2J and [link=https://evil.example]here[/link].",
    "Another \x1b]8;;https://evil.example/\x1b\\planted\x1b]8;;\x1b\\ link, \x1b[31mred\x1b[0m.",
]
# Anything a terminal would act on: C0 but tab and line end, DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _human(*args: str, env: dict[str, str], code: int = 0) -> str:
    done = doiget(*args, env=env)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    shown = done.stdout + done.stderr
    assert not RAW.search(shown), (args, shown)
    return shown


def test_human_output_shows_control_characters_escaped(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    write_lines_pdf(folder / "paper.pdf", [BODY])
    write_blank_pdf(folder / f"{NAME}.pdf")  # no title in it: its file name stands
    added = _human("add", str(folder), env=doiget_env)
    assert "\\x1b]52" in added and "[bold red]x" in added
    listed = json.loads(doiget("--json", "recent", env=doiget_env).stdout)
    rows = {row["title"] == NAME: row for row in listed["results"]}
    ref, key = rows[False]["ref"], rows[False]["key"]
    named = rows[True]["ref"]
    info = json.loads(doiget("--json", "info", ref, env=doiget_env).stdout)
    assert "\x1b]52;c;aGk=\x07" in info["metadata"]["title"]  # exact JSON: nothing escaped

    for args in (
        ("info", ref),
        ("info", named),
        ("cite", named),
        ("recent",),
        ("search", "evil"),
        ("cite", ref),
        ("bib", ref),
        ("read", key),
        ("read", key, "--pages", "1"),
        ("quote", key, "A body line \x1b]52;c;aGk=\x07 then"),
    ):
        shown = _human(*args, env=doiget_env)
        assert "\\x1b" in shown or args[0] in ("cite", "bib", "search"), (args, shown)
    read = _human("read", key, "--pages", "1", env=doiget_env)
    assert "[link=https://evil.example]here[/link]" in read
    assert "\\x1b]8;;https://evil.example/" in read
    quoted = _human("quote", key, "the body line", env=doiget_env, code=1)
    assert "not found" in quoted

    ris = doiget("ris", named, env=doiget_env).stdout
    assert ris.count("TY  - ") == 1 and ris.count("ER  - ") == 1, ris
    assert all(line[:2].isupper() and line[2:6] == "  - " for line in ris.splitlines() if line)


def test_reference_lists_reach_the_terminal_escaped(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    hostile = "\x1b]52;c;aGk=\x07\x1b[2J\u202e [bold]x[/] \x9b"
    bib = tmp_path / "refs.bib"
    bib.write_text(
        f"@article{{one,\n  title = {{A title {hostile}}},\n  author = {{Doe, Jane}},\n"
        f"  year = {{2020}},\n  journal = {{J {hostile}}}\n}}\n"
    )
    text = tmp_path / "refs.txt"
    text.write_text(f"Doe J. A title {hostile}. J Things. 2020.\n")
    _human("verify", str(bib), env=doiget_env, code=_code("verify", bib, doiget_env))
    _human("verify", str(text), env=doiget_env, code=_code("verify", text, doiget_env))
    _human("import", str(bib), env=doiget_env, code=_code("import", bib, doiget_env))


def _code(command: str, path: Path, env: dict[str, str]) -> int:
    """The exit status the command gives ``path`` (the test is about what it prints)."""
    return doiget(command, str(path), env=env).returncode


def test_web_results_and_pages_reach_the_terminal_escaped(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    env = {**doiget_env, "BRAVE_API_KEY": "brave-e2e-key"}
    hostile = (
        "\x1b]52;c;aGk=\x07\x1b[2J \u202eevil\u202c \x9b31m [link=https://evil.example]x[/link]"
    )
    upstream.json(
        *BRAVE,
        {
            "web": {
                "results": [
                    {
                        "title": f"Graphene {hostile}",
                        "url": "https://www.nature.com/articles/graphene",
                        "description": f"Graphene conducts {hostile} well.",
                    }
                ]
            }
        },
    )
    page = (
        f"<html><head><title>Essay {hostile}</title></head><body><article><h1>An essay</h1>"
        + f"<p>A paragraph of the essay about measurement {hostile} and more words.</p>" * 20
        + "</article></body></html>"
    )
    upstream.route(
        "blog.example.org", "/essay", Reply(200, page.encode(), {"Content-Type": "text/html"})
    )
    searched = _human("web", "search", "graphene", env=env)
    assert "\\x1b]52" in searched and "[link=https://evil.example]x[/link]" in searched
    # The page's text comes through extraction (which drops some controls already).
    _human("web", "scrape", "https://blog.example.org/essay", env=env)
