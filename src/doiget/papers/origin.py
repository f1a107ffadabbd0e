"""Where a stored paper's PDF came from, for every answer built from its text.

A PDF added from a local file may print any paper's title and DOI, and identification
may file it as that paper; what is read from it is still the file's. Its ``[doiget]``
table says so: ``pdf_source`` is ``local-file`` for an added PDF and the fetching
source for a fetched one, with the host it came from (``pdf_host``).
"""

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from doiget.papers.contracts import PapersModel
from doiget.papers.store import Entry

LOCAL_FILE = "local-file"


class PdfOrigin(PapersModel):
    """Where the PDF whose text an answer is built from came from: ``fetched`` (from
    ``host``, by ``source``: oa-publisher, arxiv or a publisher's TDM API) or
    ``local_file`` (added from a file on this machine: its text is the file's, whatever
    title and DOI it prints, not a copy from the publisher or a repository)."""

    kind: Literal["fetched", "local_file"]
    source: str | None = None
    host: str | None = None

    def said(self) -> str:
        """The origin for people: 'fetched from www.nature.com (oa-publisher)'."""
        if self.kind == "local_file":
            return "added from a local file (not a publisher's or repository's copy)"
        where = f" from {self.host}" if self.host else ""
        return f"fetched{where}" + (f" ({self.source})" if self.source else "")


def pdf_origin(entry: Entry) -> PdfOrigin:
    """Where the stored PDF of ``entry`` came from, as its ``[doiget]`` table records
    (a PDF stored before the host was recorded: fetched, from a host not known)."""
    fields = entry.document.get("doiget") or {}
    source = fields.get("pdf_source")
    if source == LOCAL_FILE:
        return PdfOrigin(kind="local_file", source=LOCAL_FILE)
    known: dict[str, Any] = {
        "source": source if isinstance(source, str) else None,
        "host": fields.get("pdf_host") if isinstance(fields.get("pdf_host"), str) else None,
    }
    return PdfOrigin(kind="fetched", **{name: value for name, value in known.items() if value})


def passage_origin(source: Mapping[str, Any]) -> PdfOrigin | None:
    """The origin an indexed passage's ``source`` payload recorded; None when it holds
    none (a passage given as text, or indexed before origins were recorded)."""
    recorded = source.get("pdf_origin")
    if not isinstance(recorded, Mapping):
        return None
    try:
        return PdfOrigin.model_validate(recorded)
    except ValidationError:
        return None
