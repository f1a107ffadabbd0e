"""One lock for PDFium, which is not thread-safe.

The web scraper reads PDFs in worker threads of the server's process, and a child of
:mod:`doiget.documents.pdfchild` may run more than one reading; every use of a pypdfium2
document, from opening to closing, holds this lock.
"""

from __future__ import annotations

import threading

PDFIUM_LOCK = threading.Lock()
