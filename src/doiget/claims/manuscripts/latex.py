"""A LaTeX draft's citations: ``\\cite`` and its natbib and biblatex forms, in the draft
and the files it ``\\input``s, with the bibliography it names.

The source is read as TeX reads it where that matters for citations: a ``%`` that no
backslash escapes starts a comment to the line's end, verbatim-like environments and
``\\verb`` hold no commands, and braces must balance (an unbalanced brace is refused,
naming the line it opens on, as a draft that cannot be typeset). Comments and verbatim
text are blanked, not cut, so every offset keeps its line. A citation command takes
up to two optional notes in brackets (``\\citep[see][p.~3]{a,b}``) before its keys;
the multi-citation forms (``\\cites(pre)(post)[pre][post]{a}[post]{b}``) take one such
group after another; every argument's end is found in the one pass that checks the
braces. The sentence around a citation is read from the paragraph's text once
pylatexenc has turned it into plain text, with each citation held by a marker (a
paragraph too long for pylatexenc to read in bounded time is read roughly).

``\\input`` and ``\\include`` are followed inside the draft's folder only: a path or a
link leading out of it, a file that includes itself, nesting deeper than
:data:`MAX_DEPTH` or more than :data:`MAX_FILES` files are refused; all files together
are read within the draft's size bound.
"""

from __future__ import annotations

import bisect
import errno
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from doiget.claims.manuscripts.bibfiles import References, for_citations, read_named
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript, Place
from doiget.claims.manuscripts.sentence import sentences_around, tidy
from doiget.claims.manuscripts.source import (
    MAX_CITATIONS,
    MAX_DRAFT_BYTES,
    LineIndex,
    blank,
    decode,
    read_beside,
    resolved,
    why_unread,
    within_bound,
)
from doiget.confined import Refused
from doiget.contract import invalid

MAX_DEPTH: Final = 16
MAX_FILES: Final = 500
# The most characters an optional note or a key list spans: a longer one is a bracket
# left open, not a note.
MAX_ARGUMENT_CHARS: Final = 4_000
_CITE_COMMANDS: Final = frozenset(
    {
        *(f"{name}{s}" for name in ("cite", "Cite") for s in ("", "p", "t", "alp", "alt")),
        "citeauthor", "Citeauthor", "citeyear", "citeyearpar", "citetitle", "citeurl",
        "parencite", "Parencite", "textcite", "Textcite", "autocite", "Autocite",
        "footcite", "footcitetext", "smartcite", "Smartcite", "supercite", "fullcite",
        "footfullcite", "citenum",
    }
)  # fmt: skip
_MULTI_COMMANDS: Final = frozenset(
    {"cites", "Cites", "parencites", "Parencites", "textcites", "Textcites", "autocites",
     "Autocites", "footcites", "smartcites", "Smartcites", "supercites"}
)  # fmt: skip
_INCLUDES: Final = frozenset({"input", "include", "subfile"})
_VERBATIM: Final = (
    "verbatim", "verbatim*", "Verbatim", "Verbatim*", "BVerbatim", "LVerbatim", "lstlisting",
    "minted", "comment", "filecontents", "filecontents*",
)  # fmt: skip
_SKIPPED: Final = re.compile(
    r"\\\\|\\%|\\verb\*?([^\sA-Za-z*])|\\begin\s*\{("
    + "|".join(re.escape(name) for name in _VERBATIM)
    + r")\}|%"
)
_COMMAND: Final = re.compile(r"\\([A-Za-z]+)\*?")
_GROUP_MARKS: Final = re.compile(r"\\[\s\S]|[{}\[\]()]")
_BARE_INPUT: Final = re.compile(r"[ \t]+([^\s{}%\\]+)")
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t]*\n")
_BIBLIOGRAPHY: Final = re.compile(r"\\bibliography\s*\{([^{}]*)\}")
_BIBRESOURCE: Final = re.compile(r"\\addbibresource\s*(?:\[[^\]]{0,200}\])?\s*\{([^{}]*)\}")
_LIST_BEGIN: Final = re.compile(r"\\begin\s*\{thebibliography\}")
_LIST_END: Final = re.compile(r"\\end\s*\{thebibliography\}")
_BIBITEM: Final = re.compile(r"\\bibitem\s*(?:\[[^\]]{0,500}\])?\s*\{([^{}]{1,200})\}")
_MARKER: Final = "\ue000"
# What pylatexenc reads: a paragraph of this many characters at most, and this many in
# all for a draft; past either, text is read roughly (:func:`_rough_text`).
MAX_EXACT_PARAGRAPH: Final = 20_000
MAX_EXACT_CHARS: Final = 2_000_000
_ROUGH: Final = re.compile(r"\\[A-Za-z]+\*?|\\([^A-Za-z])|``|''|[{}~]")
_ROUGH_MARKS: Final = {"``": "\u201c", "''": "\u201d", "~": " "}


@dataclass(frozen=True, slots=True)
class _Found:
    """A citation in one file's text: its span and the keys it cites."""

    start: int
    end: int
    keys: tuple[str, ...]


@dataclass(slots=True)
class _Draft:
    """What reading the draft's files gathers, in reading order; ``root`` is the
    draft's folder (None for a draft passed as text: nothing it names is read)."""

    root: Path | None
    within: Path | None = None  # the folder every file read must lie below, when bound
    citations: list[Citation] = field(default_factory=list)
    bib_names: list[str] = field(default_factory=list)
    items: References = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    read_bytes: int = 0
    files: int = 0
    exact: int = 0  # characters pylatexenc has read


def _masked(text: str) -> str:
    """``text`` with comments, ``\\verb`` text and verbatim environments blanked."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (found := _SKIPPED.search(text, position)) is not None:
        mark = found.group()
        if mark in ("\\\\", "\\%"):
            position = found.end()
            continue
        if mark == "%":
            end = text.find("\n", found.start())
            end = len(text) if end < 0 else end
        elif found.group(1) is not None:  # \verb|...|: to the delimiter, on this line
            line_end = text.find("\n", found.end())
            line_end = len(text) if line_end < 0 else line_end
            close = text.find(found.group(1), found.end(), line_end)
            end = found.end() if close < 0 else close + 1
        else:
            closing = re.compile(r"\\end\s*\{" + re.escape(found.group(2)) + r"\}")
            ended = closing.search(text, found.end())
            end = ended.start() if ended else len(text)
            spans.append((found.end(), end))
            position = ended.end() if ended else len(text)
            continue
        spans.append((found.start(), end))
        position = max(end, found.end())
    return blank(text, spans)


def _groups(masked: str, lines: LineIndex, name: str) -> dict[int, int]:
    """Where every group of ``masked`` ends: ``{`` by brace nesting; ``[`` and ``(`` as
    TeX reads an optional argument, at the first closer at their brace depth. One pass:
    each citation then finds its arguments' ends without scanning. INVALID_REF naming
    the line of a brace that never closes, or of one that closes nothing."""
    ends: dict[int, int] = {}
    braces: list[tuple[int, int, int]] = []  # (offset, brackets open, parentheses open)
    brackets: list[int] = []
    parentheses: list[int] = []
    for found in _GROUP_MARKS.finditer(masked):
        mark, at = found.group(), found.start()
        if mark == "{":
            braces.append((at, len(brackets), len(parentheses)))
        elif mark == "}":
            if not braces:
                raise invalid(
                    f"{name} line {lines.line(at)}: this '}}' closes no brace; remove it or "
                    "escape it as \\}, then read the draft again."
                )
            opened, held_brackets, held_parentheses = braces.pop()
            ends[opened] = at + 1
            del brackets[held_brackets:], parentheses[held_parentheses:]
        elif mark in "[(":
            (brackets if mark == "[" else parentheses).append(at)
        elif mark in "])":
            stack = brackets if mark == "]" else parentheses
            floor = braces[-1][1 if mark == "]" else 2] if braces else 0
            while len(stack) > floor:
                ends[stack.pop()] = at + 1
    if braces:
        raise invalid(
            f"{name} line {lines.line(braces[-1][0])}: the '{{' opened on this line is never "
            "closed; close it (or escape it as \\{), then read the draft again."
        )
    return ends


def _skip_space(text: str, position: int) -> int:
    """The first offset at or after ``position`` that is not white space (a blank line
    ends a command's arguments, as in TeX)."""
    while position < len(text) and text[position] in " \t\r\n":
        if text.startswith("\n", position) and _PARAGRAPH_BREAK.match(text, position):
            return position
        position += 1
    return position


def _group_end(ends: dict[int, int], start: int) -> int | None:
    """The offset after the group opened at ``start``; None when it never closes or
    spans more than :data:`MAX_ARGUMENT_CHARS` (a bracket left open, not a note)."""
    end = ends.get(start)
    return end if end is not None and end - start <= MAX_ARGUMENT_CHARS else None


def _optional(text: str, ends: dict[int, int], position: int, opener: str, most: int) -> int:
    """``position`` moved past up to ``most`` optional arguments opened by ``opener``."""
    for _ in range(most):
        at = _skip_space(text, position)
        end = _group_end(ends, at) if text.startswith(opener, at) else None
        if end is None:
            break
        position = end
    return position


def _keys_group(
    text: str, ends: dict[int, int], position: int
) -> tuple[int, tuple[str, ...]] | None:
    """The end and keys of a ``{a, b}`` group at ``position`` (after white space)."""
    at = _skip_space(text, position)
    end = _group_end(ends, at) if text.startswith("{", at) else None
    if end is None:
        return None
    keys = tuple(key.strip() for key in text[at + 1 : end - 1].split(","))
    # A macro's definition cites its parameter (``\cite{#1}``), not a work.
    return end, tuple(key for key in keys if key and "#" not in key and "\\" not in key)


def _citation(
    text: str, ends: dict[int, int], name: str, position: int
) -> tuple[int, tuple[str, ...]] | None:
    """The end and keys of the citation command ``name`` whose name ends at ``position``."""
    if name in _MULTI_COMMANDS:
        position = _optional(text, ends, position, "(", 2)
        keys: list[str] = []
        while True:
            group = _keys_group(text, ends, _optional(text, ends, position, "[", 2))
            if group is None:
                return (position, tuple(keys)) if keys else None
            position = group[0]
            keys.extend(group[1])
    return _keys_group(text, ends, _optional(text, ends, position, "[", 2))


def _commands(masked: str) -> Iterator[tuple[str, int, int]]:
    """(name, start, end of name and star) of every command of ``masked``."""
    for found in _COMMAND.finditer(masked):
        yield found.group(1), found.start(), found.end()


def _include_target(masked: str, ends: dict[int, int], position: int) -> str | None:
    """The path of an ``\\input{x}`` or ``\\input x`` whose name ends at ``position``."""
    at = _skip_space(masked, position)
    if masked.startswith("{", at):
        end = _group_end(ends, at)
        return masked[at + 1 : end - 1].strip() if end else None
    bare = _BARE_INPUT.match(masked, position)
    return bare.group(1) if bare else None


@functools.cache
def _contexts() -> tuple[Any, Any]:
    """pylatexenc's macro tables (parsing, then text), with ``\\enquote`` as quotes;
    built once: building them takes longer than reading a paragraph."""
    from pylatexenc import macrospec
    from pylatexenc.latex2text import MacroTextSpec
    from pylatexenc.latex2text import get_default_latex_context_db as text_db
    from pylatexenc.latexwalker import get_default_latex_context_db as walker_db

    walking = walker_db()
    walking.add_context_category("quotes", macros=[macrospec.MacroSpec("enquote", "{")])
    texting = text_db()
    texting.add_context_category("quotes", macros=[MacroTextSpec("enquote", "\u201c%s\u201d")])
    return walking, texting


def _with_markers(source: str, found: list[_Found]) -> str:
    """A paragraph's LaTeX with each citation in it replaced by a marker."""
    pieces: list[str] = []
    position = 0
    for citation in found:
        pieces.extend((source[position : citation.start], f" {_MARKER} "))
        position = citation.end
    pieces.append(source[position:])
    return "".join(pieces)


def _exact_text(source: str) -> str | None:
    """``source`` as pylatexenc turns it into text; None when pylatexenc gives up."""
    from pylatexenc.latex2text import LatexNodes2Text
    from pylatexenc.latexwalker import LatexWalker

    walking, texting = _contexts()
    try:
        nodes, _, _ = LatexWalker(
            source, latex_context=walking, tolerant_parsing=True
        ).get_latex_nodes()
        text: str = LatexNodes2Text(latex_context=texting, math_mode="verbatim").nodelist_to_text(
            nodes
        )
    except Exception:  # pylatexenc gives up on some odd input
        return None
    return text.replace("\xa0", " ")


def _rough_text(source: str) -> str:
    """``source`` as text without pylatexenc: commands dropped, escaped characters and
    the arguments' text kept, TeX quotes curled."""

    def plain(found: re.Match[str]) -> str:
        if found.group(1) is not None:
            return found.group(1)
        return _ROUGH_MARKS.get(found.group(), "")

    return _ROUGH.sub(plain, source)


def _sentences(
    draft: _Draft, masked: str, found: list[_Found]
) -> list[tuple[str, tuple[str, ...]]]:
    """The sentence and quotations of every citation of ``found``, in order. A paragraph
    is read by pylatexenc within :data:`MAX_EXACT_PARAGRAPH` characters and while the
    draft has read fewer than :data:`MAX_EXACT_CHARS` so; otherwise roughly (pylatexenc
    takes time that grows faster than the text on some input, a long run of macros)."""
    breaks = [match.end() for match in _PARAGRAPH_BREAK.finditer(masked)]
    by_paragraph: dict[int, list[_Found]] = {}
    for citation in found:
        by_paragraph.setdefault(bisect.bisect_right(breaks, citation.start), []).append(citation)
    answers: list[tuple[str, tuple[str, ...]]] = []
    for number, cited in sorted(by_paragraph.items()):
        start = breaks[number - 1] if number else 0
        end = breaks[number] if number < len(breaks) else len(masked)
        shifted = [_Found(c.start - start, c.end - start, c.keys) for c in cited]
        source = _with_markers(masked[start:end], shifted)
        text = None
        if len(source) <= MAX_EXACT_PARAGRAPH and draft.exact + len(source) <= MAX_EXACT_CHARS:
            draft.exact += len(source)
            text = _exact_text(source)
        if text is None or text.count(_MARKER) != len(cited):
            # pylatexenc was not asked, gave up, or dropped a marker (inside an argument
            # it discards): the rough reading keeps every one.
            text = _rough_text(source)
        spans = [(match.start(), match.end()) for match in re.finditer(_MARKER, text)]
        answers.extend(sentences_around(text, spans))
    return answers


def _read_file(draft: _Draft, path: Path, chain: tuple[Path, ...], place: str) -> None:
    """Read the LaTeX file ``path`` (inside the draft's folder) into ``draft``, following
    its includes in order; ``place`` says where it was included from."""
    root = draft.root
    if root is None:
        draft.notes.append(
            f"{place}: {path.name} was not read: the draft came as text, without its folder; "
            "pass the draft's file to read the files it includes."
        )
        return
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    if len(chain) > MAX_DEPTH:
        raise invalid(f"{place}: includes nest deeper than {MAX_DEPTH} files; flatten them.")
    draft.files += 1
    if draft.files > MAX_FILES:
        raise invalid(f"{place}: the draft includes more than {MAX_FILES} files.")
    try:
        real = resolved(path)
        if real in chain:
            raise invalid(f"{place}: {shown} includes itself (a cycle); remove the loop.")
        data = read_beside(root, path, MAX_DRAFT_BYTES - draft.read_bytes, draft.within)
    except Refused as refused:
        if refused.errno == errno.EFBIG:
            raise invalid(
                f"{place}: {shown} is not read: the draft and the files it includes hold "
                f"more than {MAX_DRAFT_BYTES:,} bytes; read the draft in parts."
            ) from None
        raise invalid(
            f"{place}: {shown} is not read: {why_unread(refused)} (only files inside the "
            "draft's folder are read); copy it into the folder."
        ) from None
    except FileNotFoundError:
        raise invalid(f"{place}: there is no file {shown} in the draft's folder.") from None
    except OSError as error:
        raise invalid(f"{place}: cannot read {shown}: {why_unread(error)}.") from None
    draft.read_bytes += len(data)
    name = str(shown)
    text = decode(data, name)
    _read_text(draft, text, name, (*chain, real))


def _read_text(draft: _Draft, text: str, name: str, chain: tuple[Path, ...]) -> None:
    """Read one file's ``text`` into ``draft`` (``chain``: the files including it)."""
    masked = _masked(text)
    lines = LineIndex(text)
    ends = _groups(masked, lines, name)
    draft.bib_names.extend(
        part.strip()
        for match in (*_BIBLIOGRAPHY.finditer(masked), *_BIBRESOURCE.finditer(masked))
        for part in match.group(1).split(",")
        if part.strip()
    )
    for listing in _lists(masked):
        _read_items(draft, listing)
    found: list[_Found] = []
    includes: list[tuple[int, str]] = []
    for command, start, end in _commands(masked):
        if command in _CITE_COMMANDS or command in _MULTI_COMMANDS:
            if len(found) > MAX_CITATIONS:
                continue  # past the bound no citation is read; includes still are
            cited = _citation(masked, ends, command, end)
            if cited is not None and cited[1]:
                found.append(_Found(start, cited[0], cited[1]))
        elif command in _INCLUDES and (target := _include_target(masked, ends, end)):
            includes.append((start, target))
    found = within_bound(found, len(draft.citations), draft.notes, name)
    sentences = iter(_sentences(draft, masked, found))
    events: list[tuple[int, _Found | str]] = [(c.start, c) for c in found]
    events.extend(includes)
    events.sort(key=lambda event: event[0])
    for start, event in events:
        if isinstance(event, _Found):
            sentence, quotes = next(sentences)
            if within_bound([event], len(draft.citations), draft.notes, name):
                place = Place(name, lines.line(start))
                draft.citations.append(Citation(place, sentence, event.keys, quotes))
            continue
        _include(draft, event, f"{name} line {lines.line(start)}", chain)


def _include(draft: _Draft, target: str, place: str, chain: tuple[Path, ...]) -> None:
    """Follow one ``\\input`` of ``target`` (read from the draft's folder)."""
    written = Path(target)
    if written.suffix == "":
        written = written.with_suffix(".tex")
    path = written if written.is_absolute() or draft.root is None else draft.root / written
    _read_file(draft, path, chain, place)


def _lists(masked: str) -> Iterator[str]:
    """The body of every ``thebibliography`` list (one left open runs to the end)."""
    position = 0
    while (begin := _LIST_BEGIN.search(masked, position)) is not None:
        end = _LIST_END.search(masked, begin.end())
        yield masked[begin.end() : end.start() if end else len(masked)]
        if end is None:
            return
        position = end.end()


def _read_items(draft: _Draft, listing: str) -> None:
    """The ``\\bibitem``s of a ``thebibliography`` list, as free text by key."""
    from doiget.verify.text import delatex

    items = list(_BIBITEM.finditer(listing))
    for item, following in zip(items, [*items[1:], None], strict=True):
        end = following.start() if following else len(listing)
        key = item.group(1).strip()
        draft.items.setdefault(key, Cited(key, tidy(delatex(listing[item.end() : end]))))


def _bibliography(draft: _Draft, bib: References | None) -> References:
    """The references the draft names (its .bib files, its list), then ``bib``'s."""
    found = read_named(draft.root, _bib_files(draft), draft.notes, draft.within)
    found.update(draft.items)
    return found | (bib or {})


def _bib_files(draft: _Draft) -> list[str]:
    """The .bib files the draft names (``\\bibliography{refs}`` names refs.bib)."""
    return [name if Path(name).suffix else f"{name}.bib" for name in draft.bib_names]


def read_latex(
    path: Path,
    *,
    text: str | None = None,
    bib: References | None = None,
    within: Path | None = None,
) -> Manuscript:
    """The citations and bibliography of the LaTeX draft at ``path`` (or of ``text``,
    when given: then ``path`` only names it, and no file it names is read); with
    ``within``, every file is read below that folder."""
    if text is None:
        root = path.parent.resolve()
        draft = _Draft(root, within)
        _read_file(draft, root / path.name, (), path.name)
    else:
        draft = _Draft(None)
        if len(text.encode()) > MAX_DRAFT_BYTES:
            raise invalid(f"{path.name} is longer than {MAX_DRAFT_BYTES:,} bytes.")
        _read_text(draft, text, path.name, (path,))
    references = _bibliography(draft, bib)
    named = ", ".join(_bib_files(draft)) or "the bibliography"
    missing = (
        f"no entry with this key in {named}"
        if references
        else "the draft names no bibliography doiget could read; pass it with bib"
    )
    return Manuscript(
        path.name,
        "latex",
        draft.citations,
        for_citations(draft.citations, references, missing),
        draft.notes,
    )
