"""The shipped embedder: WordLlama (MIT), a static model whose weights are in its wheel.

WordLlama averages token embeddings taken from a large language model's embedding table
and trained for sentence similarity: no network, no GPU, no torch. Measured here (2 shared
cores): ~4,400 texts a second in batches, 0.2 ms for one short text, 1.3 s to load,
~120 MB resident. Install it with ``pip install 'writegate[embeddings]'``.

The package is imported when an embedding is first asked for, so naming this embedder
costs nothing until then. It is loaded from the files its wheel ships: its own
``WordLlama.load`` looks for the tokenizer in a folder the wheel does not have (0.4.0)
and would fetch it from the network, which a server must never do.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from writegate.projections.vectors.contract import EmbedderUnavailable, Vectors, unit_rows
from writegate.projections.vectors.matrix import one_blas_thread

_MODEL = "l2_supercat"
_WEIGHTS = f"weights/{_MODEL}_256.safetensors"
_TOKENIZER = f"tokenizers/{_MODEL}_tokenizer_config.json"
MAX_CHARACTERS = 8192  # of one text: an average over more says no more, and costs memory


class WordLlamaEmbedder:
    """WordLlama's ``l2_supercat`` model, 256 dimensions."""

    dimensions = 256

    def __init__(self) -> None:
        if importlib.util.find_spec("wordllama") is None:
            raise EmbedderUnavailable(
                "embedder 'wordllama' needs the wordllama package: "
                "pip install 'writegate[embeddings]'"
            )
        self._model: Any = None
        self._lock = threading.Lock()
        self._name = f"wordllama-{version('wordllama')}-{_MODEL}-{self.dimensions}"

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        cut = [text[:MAX_CHARACTERS] for text in texts]
        model = self._loaded()
        with one_blas_thread():
            pooled = model.embed(cut, norm=False, batch_size=64)
        return unit_rows(pooled)

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load()
            return self._model


def _load() -> Any:
    """The model from the wheel's own files (see the module's docstring)."""
    from importlib.resources import files  # noqa: PLC0415 - the model loads on first use

    from safetensors import safe_open  # noqa: PLC0415
    from wordllama import WordLlama  # noqa: PLC0415
    from wordllama.inference import WordLlamaInference  # noqa: PLC0415

    root = Path(str(files("wordllama")))
    weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
    for path in (weights, tokenizer):
        if not path.exists():
            raise EmbedderUnavailable(
                f"embedder 'wordllama': {path} is not in the installed package "
                "(install the version writegate[embeddings] names)"
            )
    with safe_open(str(weights), framework="np", device="cpu") as tensors:
        table = tensors.get_tensor("embedding.weight")
    return WordLlamaInference(table, WordLlama.load_tokenizer(tokenizer))
