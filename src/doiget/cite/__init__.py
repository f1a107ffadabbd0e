"""Citations from works: BibTeX and CSL-JSON.

When a work was read online matters for a web page, not for the work itself, so it
rides in ``Work.extra[ACCESSED_KEY]`` (an ISO 8601 date) and becomes BibTeX's
``urldate`` and CSL's ``accessed``.
"""

from typing import Final

ACCESSED_KEY: Final = "accessed"
