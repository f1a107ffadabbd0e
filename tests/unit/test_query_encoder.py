"""The NumPy query encoder gives the vectors sentence-transformers gives, and a fresh
process embeds a query without importing torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from doiget.library.bert import BertEncoder, supported
from doiget.library.embedding import model_folder
from doiget.library.projects import DEFAULT_EMBED_MODEL

FOLDER = model_folder(DEFAULT_EMBED_MODEL, None)
TEXTS = [
    "thermometry in living cells",
    "What is the effect of methylphenidate on dopamine neurons in the mouse brain, and "
    "does it last after treatment stops?",
    "x",
    "Überraschung: naïve façade — 量子 computing ≥ 3\u03c3",
    "Heat-bath random walks with Markov bases " * 60,  # past the 256-token limit
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(FOLDER), device="cpu")
    return np.asarray(model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True))


def test_the_default_model_is_one_it_computes() -> None:
    assert supported(FOLDER)


def test_vectors_match_sentence_transformers_alone_and_padded(reference: np.ndarray) -> None:
    encoder = BertEncoder(FOLDER)
    together = encoder.encode(TEXTS)  # padded to the longest text
    alone = np.vstack([encoder.encode([text]) for text in TEXTS])
    for vectors in (together, alone):
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        assert np.abs(vectors - reference).max() < 1e-5
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_model_of_another_shape_is_left_to_sentence_transformers(tmp_path: Path) -> None:
    for name in ("modules.json", "config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).symlink_to(FOLDER / name)
    (tmp_path / "1_Pooling").mkdir()
    pooling = json.loads((FOLDER / "1_Pooling" / "config.json").read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps(pooling | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    )
    assert not supported(tmp_path)


def test_a_fresh_process_embeds_a_query_without_torch() -> None:
    script = (
        "import sys\n"
        "from doiget.library.embedding import embedder_for\n"
        f"embedder = embedder_for({DEFAULT_EMBED_MODEL!r})\n"
        "embedder.warm(queries=True)\n"
        "vector = embedder.embed(['lake ice radar'])[0]\n"
        "print(len(vector), 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["384", "False", "False"]
