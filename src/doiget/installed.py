"""What this install can serve: a toolset whose extra is not installed is left out of
``tools/list`` (its tools could only answer INDEX_UNAVAILABLE), and ``doiget
capabilities`` says why and how to install it. Checked with ``find_spec``: nothing
heavy is imported to find out.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec
from typing import Final

# doiget is installed from a checkout, not the package index.
LIBRARY_INSTALL: Final = (
    "pip install -e '.[library]' in the doiget checkout (after the torch step of the README)"
)
_NEEDS: Final = {"library": ("sentence_transformers", "numpy", "apsw", "sqlite_vec")}
_INSTALL: Final = {"library": LIBRARY_INSTALL}


def _absent(module: str) -> bool:
    try:
        return find_spec(module) is None
    except (ImportError, ValueError):
        return True


def why_off(toolset: str) -> str | None:
    """Why ``toolset`` cannot work in this install (None when it can)."""
    missing = [module for module in _NEEDS.get(toolset, ()) if _absent(module)]
    if not missing:
        return None
    return f"needs {', '.join(missing)}: {_INSTALL[toolset]}"


def servable(toolsets: Iterable[str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The toolsets of ``toolsets`` that can work, and why each other one is off."""
    off = {name: reason for name in toolsets if (reason := why_off(name)) is not None}
    return tuple(name for name in toolsets if name not in off), off
