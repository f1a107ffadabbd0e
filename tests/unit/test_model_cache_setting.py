"""DOIGET_MODEL_CACHE: where the exported encoder is kept, from the environment or
config.toml, under the data directory when unset; the library exports into it."""

from __future__ import annotations

from pathlib import Path

import pytest

from doiget.config import load_settings
from doiget.library.projects import Project
from doiget.library.service import Library

from replay import SHARED_ENCODER_CACHE


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {
        "DOIGET_CONFIG": str(tmp_path / "config.toml"),
        "DOIGET_DATA_DIR": str(tmp_path / "data"),
        **more,
    }


def test_unset_it_is_under_the_data_directory(tmp_path: Path) -> None:
    settings = load_settings(_env(tmp_path))
    assert settings.encoder_cache == tmp_path / "data" / "library" / "models"


def test_the_variable_or_config_toml_moves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shared = load_settings(_env(tmp_path, DOIGET_MODEL_CACHE="~/encoders"))
    assert shared.encoder_cache == tmp_path / "home" / "encoders"
    (tmp_path / "config.toml").write_text(f'model_cache = "{tmp_path / "team"}"\n')
    assert load_settings(_env(tmp_path)).encoder_cache == tmp_path / "team"
    # The variable wins over the file, as every setting does.
    moved = load_settings(_env(tmp_path, DOIGET_MODEL_CACHE=str(tmp_path / "mine")))
    assert moved.encoder_cache == tmp_path / "mine"


def test_the_library_exports_its_document_encoder_there(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    shared = SHARED_ENCODER_CACHE  # outside the data directory, and exported once
    library = Library(load_settings(_env(tmp_path, DOIGET_MODEL_CACHE=str(shared))))
    embedder = library.document_embedder(Project("lab/notes", "proj-lab-notes"), None)
    assert getattr(embedder, "cache_dir", None) == shared
