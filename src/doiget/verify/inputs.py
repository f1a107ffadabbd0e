"""References as they arrive: one tool input item, or a whole file (BibTeX, CSL-JSON,
RIS, free text one reference per paragraph, or a PDF manuscript's reference list)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO, TypeVar

from doiget.confined import Refused, open_regular, read_capped
from doiget.contract import invalid
from doiget.errors import DoigetError, ErrorCode
from doiget.verify.cited import CitedWork, Unread
from doiget.verify.contracts import MAX_REFERENCE_CHARS, MAX_REFERENCES
from doiget.verify.freetext import read_free_text
from doiget.verify.readers import read_bibtex, read_csl, read_ris

_RIS_TAG: Final = re.compile(r"^TY  - ", re.MULTILINE)
_PARAGRAPH: Final = re.compile(r"\n\s*\n")
# A whole bibliography of text: as many references as a call takes, each at its longest.
MAX_TEXT_CHARS: Final = MAX_REFERENCES * MAX_REFERENCE_CHARS
# The most bytes of a text file read: UTF-8 is at most 4 bytes a character.
MAX_TEXT_BYTES: Final = 4 * MAX_TEXT_CHARS
# CSL-JSON is a few levels deep (item, author list, name, date parts); deeper is not CSL.
MAX_JSON_DEPTH: Final = 16

logger = logging.getLogger("doiget.verify")
A = TypeVar("A")


def _depth(value: Any) -> int:
    """How deeply ``value``'s lists and objects nest (iteratively: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping | list):
            deepest = max(deepest, level)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def csl_checked(data: Any, what: str) -> Any:
    """``data`` (parsed JSON) once it is known to nest no deeper than CSL-JSON does;
    INVALID_REF otherwise."""
    if _depth(data) > MAX_JSON_DEPTH:
        raise invalid(
            f"{what} nests deeper than {MAX_JSON_DEPTH} levels, which no CSL-JSON item does; "
            "pass CSL-JSON items as citation managers export them."
        )
    return data


def _json(text: str, what: str) -> Any:
    """``text`` parsed as JSON, refused cleanly when it is not JSON or nests too deeply."""
    try:
        return csl_checked(json.loads(text), what)
    except RecursionError:
        raise invalid(
            f"{what} nests too deeply to be CSL-JSON; pass CSL-JSON items as citation "
            "managers export them."
        ) from None


def _too_long(what: str) -> DoigetError:
    return invalid(
        f"{what} is longer than {MAX_TEXT_CHARS:,} characters, more than {MAX_REFERENCES} "
        f"references can fill; pass the reference list alone, in parts of {MAX_REFERENCES} "
        "references or fewer."
    )


def bounded(works: list[CitedWork], what: str) -> list[CitedWork]:
    """``works`` when there are at most :data:`MAX_REFERENCES` of them."""
    if len(works) > MAX_REFERENCES:
        raise invalid(
            f"{what} holds {len(works)} references; at most {MAX_REFERENCES} are checked a "
            f"call: split it into parts of {MAX_REFERENCES} or fewer."
        )
    return works


def _guarded(read: Callable[[A], CitedWork], source: A) -> CitedWork:
    """``read(source)``, or a cited work saying why it could not be read: one reference
    a reader cannot take never costs the others their rows."""
    try:
        return read(source)
    except DoigetError as error:
        return CitedWork(unread=Unread(error.code.value, error.message))
    except Exception:  # a reader's fault on odd input; the other references go on
        logger.exception("a reference could not be read")
        message = (
            "doiget could not read this reference; pass it as a BibTeX entry or a CSL-JSON "
            "item, or as its DOI or arXiv id alone."
        )
        return CitedWork(unread=Unread(ErrorCode.INTERNAL_ERROR.value, message))


def read_items(items: Sequence[str | Mapping[str, Any]]) -> list[CitedWork]:
    """One cited work per tool input item, in order (see :func:`read_item`)."""
    return [_guarded(read_item, item) for item in items]


def _free_text(paragraph: str) -> CitedWork:
    """One free-text reference, refused when longer than any reference is."""
    if len(paragraph) > MAX_REFERENCE_CHARS:
        raise invalid(
            f"a reference of {len(paragraph):,} characters is longer than "
            f"{MAX_REFERENCE_CHARS:,}; put an empty line between references."
        )
    return read_free_text(paragraph)


def read_item(item: str | Mapping[str, Any]) -> CitedWork:
    """One reference of a tool call: a CSL-JSON object, or a string holding a BibTeX
    entry, an RIS record, a CSL-JSON object or free text."""
    if isinstance(item, Mapping):
        return read_csl(csl_checked(item, "the CSL-JSON item"))
    if len(item) > MAX_REFERENCE_CHARS:
        raise invalid(
            f"a reference of {len(item)} characters is longer than {MAX_REFERENCE_CHARS}; "
            "pass one reference per item."
        )
    text = item.strip()
    works: list[CitedWork] = []
    if text.startswith("@"):
        works = read_bibtex(text)
    elif _RIS_TAG.search(text):
        works = read_ris(text)
    elif text.startswith("{"):
        try:
            data = _json(text, "the CSL-JSON item")
        except ValueError:
            data = None
        if isinstance(data, dict):
            return read_csl(data)
    return works[0] if works else _free_text(text)


def csl_items(text: str, what: str) -> list[Mapping[str, Any]]:
    """The CSL-JSON items of ``text`` (one item or a list of them), INVALID_REF when it
    is not JSON or nests deeper than CSL-JSON does."""
    try:
        data = _json(text, what)
    except ValueError as exc:
        raise invalid(f"{what} is not valid CSL-JSON: {exc}.") from None
    items = data if isinstance(data, list) else [data]
    return [item for item in items if isinstance(item, Mapping)]


def read_text(text: str, name: str = "") -> list[CitedWork]:
    """Every reference of a document's text, its format told by its name or content."""
    what = name or "the input"
    if len(text) > MAX_TEXT_CHARS:
        raise _too_long(what)
    return bounded(_read_text(text, name, what), what)


def _read_text(text: str, name: str, what: str) -> list[CitedWork]:
    suffix = Path(name).suffix.lower()
    stripped = text.lstrip()
    if suffix == ".bib" or (not suffix and stripped.startswith("@")):
        return read_bibtex(text)
    if suffix == ".ris" or (not suffix and _RIS_TAG.search(text)):
        return read_ris(text)
    if suffix == ".json" or (not suffix and stripped[:1] in "[{"):
        return [read_csl(item) for item in csl_items(text, what)]
    return [_guarded(_free_text, part) for part in _PARAGRAPH.split(text) if part.strip()]


def read_file(path: Path, limit: int, what: str) -> bytes:
    """The bytes of the file a person named, INVALID_REF when it is not a regular file
    (a FIFO, device, socket or directory is never read), holds more than ``limit``
    bytes, or cannot be read; ``what`` says what to pass instead."""
    try:
        return read_capped(open_regular(path), path, limit)
    except ValueError:  # a NUL byte: no file has such a name
        raise invalid(f"the path {path!r} holds a NUL byte; pass {what}.") from None
    except Refused as refused:
        raise invalid(f"{refused.strerror}; pass {what}.") from None
    except OSError as exc:
        raise invalid(f"cannot read {path}: {exc.strerror or exc}; pass {what}.") from None


def read_file_text(path: Path) -> str:
    """The UTF-8 text of the reference file at ``path`` (a byte-order mark dropped),
    read as :func:`read_file` reads, refused when longer than a call takes."""
    what = f"a bibliography export of {MAX_REFERENCES} references or fewer"
    data = read_file(path, MAX_TEXT_BYTES, what)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise invalid(
            f"{path} is not UTF-8 text; export the references as UTF-8 BibTeX, CSL-JSON, "
            "RIS or plain text."
        ) from None
    if len(text) > MAX_TEXT_CHARS:
        raise _too_long(path.name)
    return text


def read_stream_text(stream: TextIO) -> str:
    """The text of ``stream`` (stdin), refused past what a call takes, never read further."""
    try:
        text = stream.read(MAX_TEXT_CHARS + 1)
    except UnicodeDecodeError:
        raise invalid(
            "stdin is not UTF-8 text; pass the references as UTF-8 BibTeX, CSL-JSON, RIS or "
            "plain text."
        ) from None
    if len(text) > MAX_TEXT_CHARS:
        raise _too_long("stdin")
    return text


def read_path(path: Path) -> list[CitedWork]:
    """Every reference of a file; a PDF's come from its reference list."""
    if path.suffix.lower() == ".pdf":
        from doiget.papers.adding import MAX_PDF_BYTES
        from doiget.verify.manuscript import reference_list

        data = read_file(path, MAX_PDF_BYTES, "a PDF manuscript of at most 100 MB")
        entries = reference_list(data, path.name)
        return bounded([_guarded(_free_text, entry) for entry in entries], path.name)
    return read_text(read_file_text(path), path.name)
