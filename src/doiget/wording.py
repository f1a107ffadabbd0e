"""Counts written as a reader says them: 1 source, 2 sources."""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, with ``noun`` in the plural unless ``count`` is one
    (nouns whose plural adds an s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
