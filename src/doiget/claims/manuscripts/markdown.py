"""A Pandoc Markdown draft's citations (``[@key]``, ``[see @a, p. 3; @b]``,
``@key [p. 4]``, ``[-@key]``) and the bibliography its front matter names or holds.

Parser: markdown-it-py (CommonMark) finds the blocks, so fenced and indented code and
raw HTML are never read for citations (nor are links), and each paragraph, heading, list item, quote
and table cell comes with its source lines. Pandoc itself (through pypandoc) would
read citations too, but its AST carries no source lines and its binary is not on
every machine; the citation syntax inside a block is Pandoc's, read by the patterns
below on the block's text with its code spans blanked (CommonMark's rule: a run of
backticks opens a span that the next run of the same length closes).

A key starts with a letter, digit or ``_`` and may hold ``:.#$%&-+?<>~/`` between
those (as Pandoc's keys do), or is written in braces (``@{a key}``); an ``@`` after a
letter or digit (``me@example.org``) starts none. The front matter is YAML
(``bibliography:`` a path or a list, read from the draft's folder; ``references:`` CSL
items); its lines count, so every line number is the file's. YAML aliases are refused
(a few lines of them expand without bound), and so is nesting deeper than CSL-JSON's
(PyYAML reads it in time quadratic in the depth, then recursively).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from doiget.claims.manuscripts.bibfiles import (
    References,
    csl_references,
    for_citations,
    read_named,
)
from doiget.claims.manuscripts.model import Citation, Manuscript, Place
from doiget.claims.manuscripts.sentence import sentences_around
from doiget.claims.manuscripts.source import (
    MAX_DRAFT_BYTES,
    LineIndex,
    blank,
    decode,
    read_draft,
    within_bound,
)
from doiget.contract import invalid
from doiget.verify.inputs import MAX_JSON_DEPTH

# The most front matter read: inline references for a long review fit many times over.
MAX_FRONT_MATTER_CHARS: Final = 2 * 1024 * 1024
_KEY: Final = r"(?:\{[^{}\n]{1,200}\}|\w(?:\w|[:.#$%&+?<>~/-](?=\w)){0,200})"
# A key where an ``@`` follows no letter, digit or ``@`` (an e-mail address is no key).
_CITED: Final = re.compile(rf"(?<![\w@\\])(-?)@({_KEY})")
_BRACKETED: Final = re.compile(r"\[([^\[\]]{1,2000})\](?![(\[:])")
_LOCATOR: Final = re.compile(r" ?\[([^\[\]]{0,300})\](?![(\[:])")
# An inline link or image, ``[text](destination)``: neither its text nor its target cites.
_LINK: Final = re.compile(r"!?\[[^\[\]]{0,2000}\]\([^()\s]{0,2000}(?:\s[^()]{0,500})?\)")
_BACKTICKS: Final = re.compile(r"`+")
_FRONT_END: Final = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_INLINE_MARKUP: Final = re.compile(r"\*{1,3}|`+")


def _front_matter(text: str) -> tuple[int, str]:
    """The end offset of the YAML front matter and its text (0 and '' without one)."""
    first = text.split("\n", 1)[0]
    if first.rstrip() != "---":
        return 0, ""
    start = len(first) + 1
    closing = _FRONT_END.search(text, start, start + MAX_FRONT_MATTER_CHARS)
    if closing is None and _FRONT_END.search(text, start):
        raise invalid(
            f"line 1: the front matter is longer than {MAX_FRONT_MATTER_CHARS:,} characters; "
            "keep the references in a bibliography file named by bibliography:."
        )
    if closing is None:
        raise invalid("line 1: the front matter opened by '---' never closes; end it with '---'.")
    return closing.end(), text[start : closing.start()]


def _yaml(front: str) -> dict[str, Any]:
    """The front matter's YAML, refused with its line when it cannot be read."""
    import yaml

    depth = 0
    try:
        for event in yaml.parse(front, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 2 if event.start_mark else 2
            if isinstance(event, yaml.AliasEvent):
                raise invalid(
                    f"line {line}: the front matter uses a YAML alias (*name); write the "
                    "value out instead."
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise invalid(
                        f"line {line}: the front matter nests deeper than {MAX_JSON_DEPTH} "
                        "levels, which no bibliography needs; write it flatter."
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        data = yaml.safe_load(front)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f"line {mark.line + 2}: " if mark is not None else ""
        raise invalid(f"{line}the front matter is not valid YAML; fix it and read again.") from None
    return data if isinstance(data, dict) else {}


def _code_spans(text: str) -> list[tuple[int, int]]:
    """The code spans of an inline ``text``: each run of backticks closed by the next
    run of the same length (a run with none after it is literal)."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(text)]
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = last.get(length)
        last[length] = index
    spans, index = [], 0
    while index < len(runs):
        closer = following[index]
        if closer is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closer][1]))
        index = closer + 1
    return spans


def _key(written: str) -> str:
    return written[1:-1].strip() if written.startswith("{") else written


def _citations(text: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(start, end, keys) of every citation of a block's ``text`` (code spans blanked)."""
    text = blank(text, [(link.start(), link.end()) for link in _LINK.finditer(text)])
    taken: list[tuple[int, int, tuple[str, ...]]] = []
    for group in _BRACKETED.finditer(text):
        parts = group.group(1).split(";")
        keys = [_CITED.search(part) for part in parts]
        if all(keys):
            taken.append((group.start(), group.end(), tuple(_key(k.group(2)) for k in keys if k)))
    inside = blank(text, [(start, end) for start, end, _ in taken])
    for found in _CITED.finditer(inside):
        if found.group(1):  # ``-@key`` outside brackets is text
            continue
        end = found.end()
        locator = _LOCATOR.match(inside, end)
        if locator is not None and "@" not in locator.group(1):
            end = locator.end()
        taken.append((found.start(), end, (_key(found.group(2)),)))
    yield from sorted(taken)


def _blocks(body: str) -> Iterator[tuple[int, str]]:
    """(first line, 0-based; text) of every block of inline text markdown-it finds."""
    from markdown_it import MarkdownIt

    # Blocks only: the inline rules (links, emphasis) are not needed to find citations,
    # and take time quadratic in the length of a run of brackets.
    for token in MarkdownIt("commonmark").enable("table").disable("inline").parse(body):
        if token.type == "inline" and token.map is not None:
            yield token.map[0], token.content


def read_markdown(
    path: Path,
    *,
    text: str | None = None,
    bib: References | None = None,
    within: Path | None = None,
) -> Manuscript:
    """The citations and bibliography of the Markdown draft at ``path`` (or of
    ``text``, when given: ``path`` only names it, and no file it names is read); with
    ``within``, every file is read below that folder."""
    given = text
    if text is None:
        text = decode(read_draft(path, within=within), path.name)
    elif len(text.encode()) > MAX_DRAFT_BYTES:
        raise invalid(f"{path.name} is longer than {MAX_DRAFT_BYTES:,} bytes.")
    front_end, front = _front_matter(text)
    meta = _yaml(front) if front.strip() else {}
    citations: list[Citation] = []
    notes: list[str] = []
    body = blank(text, [(0, front_end)])
    for first, content in _blocks(body):
        masked = blank(content, _code_spans(content))
        found = within_bound(list(_citations(masked)), len(citations), notes, path.name)
        if not found:
            continue
        plain = _INLINE_MARKUP.sub(lambda match: " " * len(match.group()), masked)
        said = sentences_around(plain, [(start, end) for start, end, _ in found])
        lines = LineIndex(content)
        for (start, _, keys), (sentence, quotes) in zip(found, said, strict=True):
            line = first + lines.line(start)
            citations.append(Citation(Place(path.name, line), sentence, keys, quotes))
    named = meta.get("bibliography")
    names = [named] if isinstance(named, str) else [str(name) for name in named or []]
    folder = path.parent.resolve() if given is None else None
    references = read_named(folder, names, notes, within)
    inline = meta.get("references")
    if isinstance(inline, list):
        references |= csl_references(inline, f"{path.name}'s front matter")
    references |= bib or {}
    where = ", ".join(names) or ("the front matter's references" if inline else "")
    missing = (
        f"no entry with this key in {where or 'the bibliography'}"
        if references
        else "the draft names no bibliography doiget could read; pass it with bib"
    )
    return Manuscript(
        path.name, "markdown", citations, for_citations(citations, references, missing), notes
    )
