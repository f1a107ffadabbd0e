"""A query encoder for BERT sentence-embedding models in NumPy: no torch, no
sentence-transformers.

Embedding a query is one short forward pass, but importing sentence-transformers
(torch, transformers) costs seconds. For the models it can run exactly — a
``BertModel`` followed by mean pooling and normalisation, as ``all-MiniLM-L6-v2``
is — this module reads the same weights (``model.safetensors``) and tokenizer
(``tokenizer.json``) and computes the same vectors (to float32 rounding), so a
query can be answered in a fraction of a second by a fresh process. Indexing, with
many texts, goes through :mod:`doiget.library.onnx_encoder` (or sentence-transformers).

The forward pass is the standard BERT encoder: token + position + segment
embeddings and LayerNorm, then per layer multi-head self-attention and a GELU
feed-forward block, each followed by a residual LayerNorm.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# The module chain this encoder reproduces (sentence-transformers' modules.json).
_MODULES: Final = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)
# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7, below float32 resolution here.
_ERF_P: Final = 0.3275911
_ERF_A: Final = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def supported(folder: Path) -> bool:
    """Whether the model in ``folder`` is one this encoder computes exactly."""
    modules = _json(folder / "modules.json")
    config = _json(folder / "config.json")
    pooling = _json(folder / "1_Pooling" / "config.json")
    if not (isinstance(modules, list) and isinstance(config, dict) and isinstance(pooling, dict)):
        return False
    types = tuple(str(module.get("type")) for module in modules if isinstance(module, dict))
    only_mean = pooling.get("pooling_mode_mean_tokens") is True and not any(
        pooling.get(mode)
        for mode in (
            "pooling_mode_cls_token",
            "pooling_mode_max_tokens",
            "pooling_mode_mean_sqrt_len_tokens",
        )
    )
    return (
        types == _MODULES
        and only_mean
        and config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and (folder / "model.safetensors").is_file()
        and (folder / "tokenizer.json").is_file()
    )


def _erf(x: NDArray[np.float32]) -> NDArray[np.float32]:
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * a)
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    result: NDArray[np.float32] = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)
    return result


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(x.dtype)


def _layer_norm(
    x: NDArray[np.float32], weight: NDArray[np.float32], bias: NDArray[np.float32], eps: float
) -> NDArray[np.float32]:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    var = np.square(x - mean).mean(axis=-1, keepdims=True)
    result: NDArray[np.float32] = ((x - mean) / np.sqrt(var + eps) * weight + bias).astype(
        np.float32
    )
    return result


def sequence_tokenizer(folder: Path) -> Any:
    """The model's fast tokenizer, cutting at the model's sequence length, not padding."""
    from tokenizers import Tokenizer

    config = _json(folder / "config.json") or {}
    sbert = _json(folder / "sentence_bert_config.json") or {}
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(
        int(sbert.get("max_seq_length") or config["max_position_embeddings"])
    )
    tokenizer.no_padding()
    return tokenizer


def mean_pooled(hidden: NDArray[np.float32], mask: NDArray[np.float32]) -> NDArray[np.float32]:
    """Unit-length means of the unmasked token states (batch x tokens x hidden)."""
    import numpy as np

    pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    vectors: NDArray[np.float32] = (pooled / norms).astype(np.float32)
    return vectors


class BertEncoder:
    """Mean-pooled, normalised BERT sentence embeddings computed with NumPy."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file

        config = _json(folder / "config.json")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.weights: dict[str, NDArray[Any]] = load_file(str(folder / "model.safetensors"))
        self.prefix = "bert." if "bert.embeddings.word_embeddings.weight" in self.weights else ""
        tokenizer = sequence_tokenizer(folder)
        tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))
        self.tokenizer = tokenizer

    def _w(self, name: str) -> NDArray[np.float32]:
        return self.weights[self.prefix + name]

    def _dense(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return x @ self._w(f"{name}.weight").T + self._w(f"{name}.bias")

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length vector per text."""
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        segments = np.array([e.type_ids for e in encodings], dtype=np.int64)
        length = ids.shape[1]
        x = (
            self._w("embeddings.word_embeddings.weight")[ids]
            + self._w("embeddings.position_embeddings.weight")[:length]
            + self._w("embeddings.token_type_embeddings.weight")[segments]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding gets no attention: the most negative float32, as BERT's own code adds.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}")
        return mean_pooled(x, mask)

    def _norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return _layer_norm(x, self._w(f"{name}.weight"), self._w(f"{name}.bias"), self.eps)

    def _layer(
        self, x: NDArray[np.float32], bias: NDArray[np.float32], name: str
    ) -> NDArray[np.float32]:
        import numpy as np

        batch, length, hidden = x.shape
        size = hidden // self.heads

        def split(t: NDArray[np.float32]) -> NDArray[np.float32]:
            return t.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        query = split(self._dense(x, f"{name}.attention.self.query"))
        key = split(self._dense(x, f"{name}.attention.self.key"))
        value = split(self._dense(x, f"{name}.attention.self.value"))
        scores = query @ key.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        context = (probs @ value).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        attended = self._dense(context, f"{name}.attention.output.dense")
        x = self._norm(attended + x, f"{name}.attention.output.LayerNorm")
        inner = _gelu(self._dense(x, f"{name}.intermediate.dense"))
        return self._norm(
            self._dense(inner, f"{name}.output.dense") + x, f"{name}.output.LayerNorm"
        )
