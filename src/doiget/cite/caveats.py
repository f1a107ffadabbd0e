"""What a reference to a work doiget could not identify must say, in every format."""

from __future__ import annotations

from typing import Final

from doiget.models import Work

# The Work.extra key a stored entry's ``identified = false`` is carried under.
IDENTIFIED_KEY: Final = "identified"
UNIDENTIFIED_NOTE: Final = (
    "Unidentified local PDF: title and authors as read from the file, not checked "
    "against any source"
)


def unidentified_note(work: Work) -> str | None:
    """The note a reference to ``work`` carries when no source identified it."""
    return UNIDENTIFIED_NOTE if work.extra.get(IDENTIFIED_KEY) is False else None


def joined_notes(*notes: str | None) -> str | None:
    """The notes given, in order, as one field (None when there are none)."""
    return "; ".join(note for note in notes if note) or None
