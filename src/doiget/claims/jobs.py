"""Weighing a claim against a source: CPU work (reading a PDF, encoding sentences) as a
module-level function whose arguments and result pickle, so a work pool runs it in a
worker thread or, where it runs searches apart, in a worker process. Each process keeps
its own parsed documents (the reading core's) and loads the encoder once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doiget.claims.evidence import Assessment


def weigh(claim: str, ref: str, pdf: Path | None, text: str | None) -> Assessment:
    """The engine's assessment of ``claim`` against the stored PDF ``pdf`` (pages and
    sections), else against ``text`` (offsets); NOT_FOUND when the PDF has no text."""
    # The engine's modules: imported here, in the worker that runs the job.
    from doiget.claims.encoder import default_encoder
    from doiget.claims.evidence import assess
    from doiget.claims.textunits import units_of_document, units_of_text

    if pdf is not None:
        from doiget.reading.jobs import load

        units = units_of_document(load(pdf, ref))
    else:
        units = units_of_text(text or "")
    return assess(claim, units, default_encoder())


def warm() -> None:
    """The encoder loaded in a worker process before its first weighing, outside any
    work's time limit."""
    from doiget.claims.encoder import default_encoder

    default_encoder().encode(["warm"])
