"""What the extraction worker runs: a fetched body in, its text and metadata out.

Only the worker processes of worker.py import this module (their fork server loads it
once, with the readers it needs, so each worker starts warm); the server itself never
does, so neither the readers nor what they allocate ever live in the server process.
Every task takes the body as bytes and returns plain data that pickles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import docx  # noqa: F401  (loaded here so that every worker starts with it)
import pptx  # noqa: F401
import pypdfium2  # noqa: F401
import trafilatura  # noqa: F401

from doiget.net.client import decoded_body
from doiget.web.scrape.documents import DocumentText, extract_docx, extract_pdf, extract_pptx
from doiget.web.scrape.html import HtmlExtraction, extract_html
from doiget.web.scrape.limits import EXTRACT_MAX_TEXT_CHARS
from doiget.web.scrape.scriptshell import SHELL_TEXT_CHARS, script_shell

_DOCUMENT_READERS: Final[dict[str, Callable[[bytes], DocumentText]]] = {
    "pdf": extract_pdf,
    "docx": extract_docx,
    "pptx": extract_pptx,
}


@dataclass(frozen=True)
class HtmlReading:
    """A page as the html tier reads it, and why it needs its scripts run (None: it
    does not)."""

    page: HtmlExtraction
    shell: str | None


def read_document(body: bytes, kind: str) -> DocumentText:
    """The text of a PDF, DOCX or PPTX (``kind``)."""
    return _DOCUMENT_READERS[kind](body)


def read_html(body: bytes, content_type: str, url: str) -> HtmlReading:
    """The page's markdown and metadata, and whether it is a shell that script fills."""
    html = decoded_body(body, content_type)
    page = extract_html(html, url)
    text = page.markdown.strip()
    if len(text) >= SHELL_TEXT_CHARS:
        return HtmlReading(page, None)
    shell = script_shell(html)
    if shell is None and not text:
        shell = "no readable text came out of its HTML"
    return HtmlReading(page, shell)


def read_text(body: bytes, content_type: str) -> str:
    """A plain-text or markdown body, at most :data:`EXTRACT_MAX_TEXT_CHARS` of it (more
    than any max_length takes, so a cut here is also a cut in the result)."""
    return decoded_body(body, content_type)[:EXTRACT_MAX_TEXT_CHARS]


TASKS: Final[dict[str, Callable[..., Any]]] = {
    "document": read_document,
    "html": read_html,
    "text": read_text,
}
