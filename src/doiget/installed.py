"""What this install can serve: a toolset whose extra is not installed is left out of
``tools/list`` (its tools could only answer INDEX_UNAVAILABLE), and ``doiget
capabilities`` says why and how to install it; the same for scrape_page's browser
tier, and for the zotero toolset while no Zotero library is configured. Checked with
``find_spec``, ``PATH`` and the settings: nothing heavy is imported to find out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Final

from doiget.browserconfig import BrowserSettings

if TYPE_CHECKING:
    from doiget.config import Settings

# doiget is installed from a checkout, not the package index.
LIBRARY_INSTALL: Final = (
    "pip install -e '.[library]' in the doiget checkout (after the torch step of the README)"
)
_NEEDS: Final = {"library": ("sentence_transformers", "numpy", "apsw", "sqlite_vec")}
_INSTALL: Final = {"library": LIBRARY_INSTALL}


BROWSER_INSTALL: Final = (
    "pip install -e '.[browser]' in the doiget checkout and Debian's chromium package "
    "(apt-get install chromium), or set DOIGET_BROWSER_PATH"
)


@dataclass(frozen=True, slots=True)
class BrowserState:
    """The browser tier's state: usable, or why not and how to make it so."""

    usable: bool
    executable: Path | None
    reason: str | None = None

    def describe(self) -> str:
        """One line for ``doiget capabilities`` and error messages."""
        if self.usable:
            return f"available ({self.executable}, started on first use)"
        return f"unavailable: {self.reason}"


def browser_state(settings: BrowserSettings) -> BrowserState:
    """What the browser tier can do under ``settings``."""
    if not settings.enabled:
        return BrowserState(False, None, "turned off by DOIGET_BROWSER=off")
    missing = _absent("playwright")
    executable = settings.chromium()
    if missing and executable is None:
        return BrowserState(False, None, f"needs Playwright and Chromium: {BROWSER_INSTALL}")
    if missing:
        return BrowserState(False, executable, f"needs Playwright: {BROWSER_INSTALL}")
    if executable is None:
        return BrowserState(False, None, f"no Chromium executable found: {BROWSER_INSTALL}")
    return BrowserState(True, executable)


def _absent(module: str) -> bool:
    try:
        return find_spec(module) is None
    except (ImportError, ValueError):
        return True


ZOTERO_SETUP: Final = (
    "needs a Zotero library: set DOIGET_ZOTERO_LOCAL=1 (the desktop app) or "
    "DOIGET_ZOTERO_LIBRARY with DOIGET_ZOTERO_API_KEY (the Web API)"
)


def why_off(toolset: str, settings: Settings | None = None) -> str | None:
    """Why ``toolset`` cannot work in this install under ``settings`` (None when it can)."""
    if toolset == "zotero" and settings is not None and not settings.zotero.configured:
        return ZOTERO_SETUP
    missing = [module for module in _NEEDS.get(toolset, ()) if _absent(module)]
    if not missing:
        return None
    return f"needs {', '.join(missing)}: {_INSTALL[toolset]}"


def servable(
    toolsets: Iterable[str], settings: Settings | None = None
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The toolsets of ``toolsets`` that can work (under ``settings``, when given), and
    why each other one is off."""
    toolsets = tuple(toolsets)
    off = {name: why for name in toolsets if (why := why_off(name, settings)) is not None}
    return tuple(name for name in toolsets if name not in off), off
