"""Whether this install can run the browser tier, found without starting anything:
the ``browser`` extra (Playwright for Python) and a Chromium executable."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Final

from doiget.browserconfig import BrowserSettings

INSTALL_HINT: Final = (
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
    try:
        missing = find_spec("playwright") is None
    except (ImportError, ValueError):
        missing = True
    executable = settings.chromium()
    if missing and executable is None:
        return BrowserState(False, None, f"needs Playwright and Chromium: {INSTALL_HINT}")
    if missing:
        return BrowserState(False, executable, f"needs Playwright: {INSTALL_HINT}")
    if executable is None:
        return BrowserState(False, None, f"no Chromium executable found: {INSTALL_HINT}")
    return BrowserState(True, executable)
