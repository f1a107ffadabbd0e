"""The browser tier's settings (scrape_page's last extraction tier), read with the others."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from doiget.settingvalues import path_setting, seconds_setting, switch_setting, whole_setting
from doiget.upstreams import Setting

DEFAULT_PAGES: Final = 2
MAX_PAGES: Final = 8
DEFAULT_DEADLINE: Final = 20.0
MAX_DEADLINE: Final = 300.0
DEFAULT_IDLE: Final = 120.0
MAX_IDLE: Final = 86_400.0
# Names a Chromium is installed under: Debian's package, other distributions, Chrome.
EXECUTABLE_NAMES: Final = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")

BROWSER_SETTINGS: Final = (
    Setting(
        "DOIGET_BROWSER",
        "=off never starts the browser tier; default auto (used when installed and needed)",
        config_key="browser",
    ),
    Setting(
        "DOIGET_BROWSER_PATH",
        "Chromium executable for the browser tier (default: chromium, chromium-browser or "
        "google-chrome on PATH)",
        config_key="browser_path",
    ),
    Setting(
        "DOIGET_BROWSER_PAGES",
        f"pages the browser renders at once (default {DEFAULT_PAGES}, at most {MAX_PAGES}); "
        "more wait their turn",
        config_key="browser_pages",
    ),
    Setting(
        "DOIGET_BROWSER_DEADLINE",
        f"seconds one page may take in the browser, start to text (default {DEFAULT_DEADLINE:.0f})",
        config_key="browser_deadline",
    ),
    Setting(
        "DOIGET_BROWSER_IDLE",
        f"seconds without a page after which the browser process is closed (default "
        f"{DEFAULT_IDLE:.0f})",
        config_key="browser_idle",
    ),
)


@dataclass(frozen=True)
class BrowserSettings:
    """Whether and how scrape_page may render a page in headless Chromium."""

    enabled: bool = True
    executable: Path | None = None
    pages: int = DEFAULT_PAGES
    deadline: float = DEFAULT_DEADLINE
    idle: float = DEFAULT_IDLE

    def chromium(self) -> Path | None:
        """The Chromium to drive: the configured one, else the first on PATH."""
        if self.executable is not None:
            return self.executable
        for name in EXECUTABLE_NAMES:
            found = shutil.which(name)
            if found is not None:
                return Path(found)
        return None


def _enabled(raw: Any) -> bool:
    """auto (the default) or any on word: used when installed and needed; off: never."""
    if str(raw).strip().lower() == "auto":
        return True
    return switch_setting("DOIGET_BROWSER", raw, True)


def browser_settings(pick: Callable[[str, str], Any]) -> BrowserSettings:
    """The browser settings from the environment / config.toml (``pick(var, key)``)."""
    return BrowserSettings(
        enabled=_enabled(pick("DOIGET_BROWSER", "browser")),
        executable=path_setting(
            "DOIGET_BROWSER_PATH",
            pick("DOIGET_BROWSER_PATH", "browser_path"),
            folder=False,
            wanted="a Chromium executable (Debian: /usr/bin/chromium)",
        ),
        pages=whole_setting(
            "DOIGET_BROWSER_PAGES",
            pick("DOIGET_BROWSER_PAGES", "browser_pages"),
            DEFAULT_PAGES,
            1,
            MAX_PAGES,
        ),
        deadline=seconds_setting(
            "DOIGET_BROWSER_DEADLINE",
            pick("DOIGET_BROWSER_DEADLINE", "browser_deadline"),
            DEFAULT_DEADLINE,
            MAX_DEADLINE,
        ),
        idle=seconds_setting(
            "DOIGET_BROWSER_IDLE",
            pick("DOIGET_BROWSER_IDLE", "browser_idle"),
            DEFAULT_IDLE,
            MAX_IDLE,
        ),
    )
