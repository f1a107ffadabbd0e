"""The document encoder: the embedding model exported to ONNX with its matrix
multiplications quantised to int8 (per output channel), run by ONNX Runtime.

Indexing embeds thousands of passages and the model is nearly all of its cost; this
encoder embeds them 1.15-1.5 times as fast as sentence-transformers on an unloaded
2-core machine without int8 dot-product instructions (AVX2 only), and 2-3.7 times as
fast when other work shares the cores (``benchmarks/index_throughput.py``), at a cosine
of 0.98 or more to the exact vectors.
Queries are still embedded exactly (:mod:`doiget.library.bert`), so query latency and
the query side of every ranking are unchanged.

The model is exported from the installed weights on first use (this needs torch and
transformers, which the library extra installs; afterwards indexing imports neither):
traced to ONNX, its attention, GELU and LayerNorm fused by ONNX Runtime's transformer
optimiser, then quantised. The result is cached under the data dir, in a file named by
a digest of the weights and of this recipe, written atomically, with the file's own
SHA-256 beside it; a cache file that fails that check, or that ONNX Runtime cannot
load, is exported again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from doiget.atomicfile import move_into_place, write_atomic
from doiget.library.embedding import ONNX_INT8
from doiget.workpool import usable_cores

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger("doiget.library.onnx_encoder")

# Part of the cache key: bump it when the export recipe changes.
RECIPE: Final = "bert-fused-int8-per-channel/1"
BATCH_SIZE: Final = 32
OPSET: Final = 17
_INPUTS: Final = ("input_ids", "attention_mask", "token_type_ids")


def runnable(folder: Path) -> bool:
    """Whether this encoder can run the model in ``folder`` here: a BERT model the
    exact query encoder also computes, and ONNX Runtime installed."""
    from doiget.library.bert import supported

    return all(find_spec(name) is not None for name in ("onnxruntime", "onnx")) and supported(
        folder
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_file(folder: Path, cache_dir: Path) -> Path:
    """Where the encoder of the weights in ``folder`` is cached."""
    key = hashlib.sha256(RECIPE.encode())
    for name in ("config.json", "model.safetensors"):
        key.update(_sha256(folder / name).encode())
    return cache_dir / f"{key.hexdigest()[:32]}.{ONNX_INT8}.onnx"


def _checksum_file(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _intact(path: Path) -> bool:
    """Whether ``path`` is the file its checksum was written for."""
    try:
        expected = _checksum_file(path).read_text(encoding="ascii").strip()
        return expected == _sha256(path)
    except OSError:
        return False


def _export(folder: Path, target: Path) -> None:
    """Export, fuse and quantise the model in ``folder`` into ``target`` (atomically)."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import BertModel
    from transformers.utils import logging as hf_logging

    class Hidden(torch.nn.Module):
        """The encoder's last hidden states (pooling runs after, in NumPy)."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(
            self, ids: torch.Tensor, mask: torch.Tensor, segments: torch.Tensor
        ) -> torch.Tensor:
            output = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=segments)
            hidden: torch.Tensor = output.last_hidden_state
            return hidden

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix=".export-", dir=target.parent) as work,
        warnings.catch_warnings(),
        contextlib.redirect_stdout(sys.stderr),  # nothing but JSON-RPC reaches stdout
    ):
        warnings.simplefilter("ignore")
        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        traced, fused, quantised = (Path(work) / name for name in ("a.onnx", "b.onnx", "c.onnx"))
        # Eager attention traces to the pattern the optimiser fuses into one operator.
        model = Hidden(
            BertModel.from_pretrained(
                str(folder), add_pooling_layer=False, attn_implementation="eager"
            )
        ).eval()
        sample = torch.ones((2, 8), dtype=torch.int64)
        axes = {"batch": 0, "tokens": 1}
        with torch.no_grad():
            torch.onnx.export(
                model,
                (sample, sample, torch.zeros_like(sample)),
                str(traced),
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {index: axis for axis, index in axes.items()}
                    for name in (*_INPUTS, "last_hidden_state")
                },
                opset_version=OPSET,
                dynamo=False,
            )
        optimizer.optimize_model(
            str(traced),
            model_type="bert",
            num_heads=int(config["num_attention_heads"]),
            hidden_size=int(config["hidden_size"]),
        ).save_model_to_file(str(fused))
        # Per-channel scales keep the vectors within cosine 0.99 of the exact model's;
        # one scale per matrix does not (0.90 at worst on SciFact abstracts).
        quantize_dynamic(
            fused,
            quantised,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        with quantised.open("rb") as handle:
            os.fsync(handle.fileno())
        move_into_place(quantised, target)
    write_atomic(_checksum_file(target), _sha256(target).encode("ascii"))


def _session(path: Path) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = usable_cores()
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def load_session(folder: Path, cache_dir: Path) -> Any:
    """An ONNX Runtime session of the cached encoder, exported first when the cache is
    missing, fails its checksum or does not load."""
    path = cache_file(folder, cache_dir)
    if _intact(path):
        try:
            return _session(path)
        except Exception:  # a file that passes its checksum yet does not load
            logger.warning("cached document encoder %s does not load; exporting again", path)
    logger.info("exporting the document encoder of %s to %s", folder, path)
    _export(folder, path)
    return _session(path)


class OnnxEncoder:
    """Unit-length vectors of many texts, through the quantised model (see the module
    docstring); texts are batched by token length, so little of a batch is padding."""

    def __init__(self, folder: Path, cache_dir: Path) -> None:
        from doiget.library.bert import sequence_tokenizer

        self.session = load_session(folder, cache_dir)
        self.tokenizer = sequence_tokenizer(folder)
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], dimension: int) -> NDArray[np.float32]:
        import numpy as np

        from doiget.library.bert import mean_pooled

        tokens = [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(tokens)), key=lambda row: len(tokens[row]))
        vectors = np.empty((len(tokens), dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start : start + BATCH_SIZE]
            width = max(len(tokens[row]) for row in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for line, row in enumerate(rows):
                ids[line, : len(tokens[row])] = tokens[row]
                mask[line, : len(tokens[row])] = 1
            feed = dict(zip(_INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
            with self._lock:
                hidden = self.session.run(None, feed)[0]
            vectors[rows] = mean_pooled(hidden, mask.astype(np.float32))
        return vectors
