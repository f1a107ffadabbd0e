"""Upstream settings are read generically from their declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.secret import Secret


def _env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"DOIGET_CONFIG": str(tmp_path / "config.toml"), **values}


def test_secrets_are_wrapped_and_plain_settings_are_text(tmp_path: Path) -> None:
    settings = load_settings(_env(tmp_path, BRAVE_API_KEY="k-1", GOOGLE_CX="cx-1"))
    assert settings.secret("BRAVE_API_KEY") == Secret("k-1")
    assert settings.secret("BRAVE_API_KEY") == Secret("k-1")
    assert settings.text("GOOGLE_CX") == "cx-1"
    assert settings.value("TAVILY_API_KEY") is None
    assert "k-1" not in repr(settings)
    with pytest.raises(TypeError):
        settings.text("BRAVE_API_KEY")
    with pytest.raises(TypeError):
        settings.secret("GOOGLE_CX")


def test_plain_settings_fall_back_to_config_toml_but_secrets_do_not(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'searxng_url = "http://search.lan:8080/"\npubmed_email = "me@example.org"\n'
        'BRAVE_API_KEY = "from-file"\n'
    )
    settings = load_settings(_env(tmp_path))
    assert settings.text("SEARXNG_URL") == "http://search.lan:8080"
    assert settings.pubmed_email == "me@example.org"
    assert settings.secret("BRAVE_API_KEY") is None
    assert load_settings(_env(tmp_path, PUBMED_EMAIL="env@example.org")).pubmed_email == (
        "env@example.org"
    )


def test_a_url_setting_that_is_not_http_refuses_the_start(tmp_path: Path) -> None:
    with pytest.raises(DoigetError) as caught:
        load_settings(_env(tmp_path, SEARXNG_URL="search.lan"))
    assert "SEARXNG_URL" in caught.value.message
