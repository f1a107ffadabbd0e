"""One lock for PDFium, which is not thread-safe.

The library indexer and the web scraper both read PDFs in worker threads of the same
process; every use of a pypdfium2 document, from opening to closing, holds this lock.
"""

from __future__ import annotations

import threading

PDFIUM_LOCK = threading.Lock()
