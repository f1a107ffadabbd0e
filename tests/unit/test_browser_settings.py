"""The browser tier's settings and what the install can do, found without starting it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from doiget.browserconfig import BrowserSettings
from doiget.config import load_settings
from doiget.errors import DoigetError, ErrorCode
from doiget.installed import browser_state


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"DOIGET_CONFIG": str(tmp_path / "none.toml"), "DOIGET_DATA_DIR": str(tmp_path), **extra}


def test_defaults(tmp_path: Path) -> None:
    browser = load_settings(_env(tmp_path)).browser
    assert browser == BrowserSettings()
    assert (browser.enabled, browser.pages, browser.deadline, browser.idle) == (
        True,
        2,
        20.0,
        120.0,
    )


def test_values_from_the_environment_and_the_config_file(tmp_path: Path) -> None:
    chromium = tmp_path / "my-chromium"
    chromium.write_text("#!/bin/sh\n")
    (tmp_path / "config.toml").write_text('browser_pages = 3\nbrowser_idle = "15"\n')
    env = {
        **_env(tmp_path, DOIGET_BROWSER_PATH=str(chromium), DOIGET_BROWSER_DEADLINE="7.5"),
        "DOIGET_CONFIG": str(tmp_path / "config.toml"),
    }
    browser = load_settings(env).browser
    assert browser.executable == chromium and browser.chromium() == chromium
    assert (browser.pages, browser.deadline, browser.idle) == (3, 7.5, 15.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DOIGET_BROWSER", "sometimes"),
        ("DOIGET_BROWSER_PAGES", "0"),
        ("DOIGET_BROWSER_PAGES", "9"),
        ("DOIGET_BROWSER_PAGES", "two"),
        ("DOIGET_BROWSER_DEADLINE", "0"),
        ("DOIGET_BROWSER_DEADLINE", "-1"),
        ("DOIGET_BROWSER_DEADLINE", "301"),
        ("DOIGET_BROWSER_IDLE", "soon"),
        ("DOIGET_BROWSER_PATH", "/no/such/chromium"),
    ],
)
def test_bad_values_refuse_the_start_naming_the_variable(
    tmp_path: Path, name: str, value: str
) -> None:
    with pytest.raises(DoigetError) as caught:
        load_settings(_env(tmp_path, **{name: value}))
    assert caught.value.code is ErrorCode.INVALID_CONFIG
    assert name in caught.value.message


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
def test_off_turns_the_tier_off_and_says_so(tmp_path: Path, value: str) -> None:
    state = browser_state(load_settings(_env(tmp_path, DOIGET_BROWSER=value)).browser)
    assert not state.usable
    assert state.describe() == "unavailable: turned off by DOIGET_BROWSER=off"


def test_no_chromium_on_path_is_unavailable_with_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    state = browser_state(BrowserSettings())
    assert not state.usable and state.executable is None
    assert "apt-get install chromium" in state.describe()
    assert "DOIGET_BROWSER_PATH" in state.describe()


def test_the_first_chromium_on_path_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = tmp_path / "chromium-browser"
    found.write_text("#!/bin/sh\n")
    found.chmod(found.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + "/nonexistent")
    assert BrowserSettings().chromium() == found
