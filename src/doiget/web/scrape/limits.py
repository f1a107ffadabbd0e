"""The caps on reading a fetched page or document, in one place (the documentation lists
them: docs/guides/research-the-web.md).

A body is fetched under ``FETCH_CAP_BYTES`` (service.py); what it may expand to, how
many elements its markup may hold, and how much CPU time and memory reading it may
take are bounded here. Over a cap, the read is refused with a ``too_large`` error
before the costly step, or stopped by the extraction worker's resource limits.
"""

from __future__ import annotations

from typing import Final

from doiget.web.requests import MAX_SCRAPE_BYTES

# -- the extraction worker (every document type and HTML) ------------------------------
# CPU seconds one extraction may use; the worker process is stopped past it.
EXTRACT_CPU_SECONDS: Final = 20
# Wall-clock seconds one extraction may take (a busy machine gives less CPU per second).
EXTRACT_WALL_SECONDS: Final = 60
# Memory one extraction may allocate beyond what the worker starts with.
EXTRACT_MEMORY_BYTES: Final = 1024 * 1024 * 1024
# Characters of text an extraction returns at most: twice the largest max_length, so
# cleaning and cutting at a boundary still fill any request; the rest is not read.
EXTRACT_MAX_TEXT_CHARS: Final = 2 * MAX_SCRAPE_BYTES

# -- DOCX and PPTX (zip packages), checked on the central directory before reading ----
OOXML_MAX_MEMBERS: Final = 5_000
OOXML_MAX_MEMBER_BYTES: Final = 64 * 1024 * 1024
OOXML_MAX_TOTAL_BYTES: Final = 256 * 1024 * 1024
# Uncompressed over compressed size; checked for members larger than the grace size
# (tiny members compress by more than this legitimately).
OOXML_MAX_RATIO: Final = 100
OOXML_RATIO_GRACE_BYTES: Final = 1024 * 1024

# -- HTML --------------------------------------------------------------------------------
# Elements a page may hold; extraction costs about 30 microseconds per element.
HTML_MAX_ELEMENTS: Final = 150_000

# -- PDF ---------------------------------------------------------------------------------
# Pages read at most; a longer document is read up to here and marked partial.
PDF_MAX_PAGES: Final = 2_000
