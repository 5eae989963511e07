"""``[embeddings]``: which embedder makes the vectors, where they are kept, how much a
follower's batch takes. Absent, there are no vectors and nothing of them is loaded.

```toml
[embeddings]
provider = "wordllama"       # an entry point of writegate.embedders, or package.module:Class
path = "var/vectors.db"      # a SQLite log's vectors (default: beside the log, NAME-vectors.db)
```
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from writegate.eventlog import Log

if TYPE_CHECKING:  # numpy and the model load only when vectors are opened
    from writegate.projections.vectors.contract import Embedder
    from writegate.projections.vectors.projector import VectorProjector


class EmbedderUnavailable(ValueError):
    """The configured embedder cannot be had (unknown name, its package not installed, not
    an embedder, its model files missing): one line saying which and what to do."""


VECTORS = "vectors"  # the projection [embeddings] adds: status, follow, replay, rebuild


class EmbeddingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1)
    path: Path | None = None  # SQLite logs only: PostgreSQL keeps them in the log's database
    batch: int = Field(default=2000, ge=1)  # events a follower's batch embeds the documents of

    def open(self, name: str, log: Log) -> VectorProjector:
        """The vectors of ``log`` (made by this provider), as a projector and a reader; an
        embedder that cannot be had raises ``EmbedderUnavailable`` (a ValueError)."""
        embedder = self.embedder()
        from writegate.projections.vectors.projector import VectorProjector  # noqa: PLC0415

        return VectorProjector(log, embedder, path=self.path, name=name)

    def embedder(self) -> Embedder:
        """The provider's embedder, its model not yet loaded (that waits for the first text):
        what ``serve`` checks at start, so that a server never answers questions with an
        embedder it cannot have."""
        try:
            from writegate.projections.vectors.embedders import load_embedder  # noqa: PLC0415
        except ImportError as exc:  # numpy: writegate[embeddings] was not installed
            raise EmbedderUnavailable(
                f"embeddings need {exc.name or 'numpy'}: pip install 'writegate[embeddings]'"
            ) from exc
        return load_embedder(self.provider)

    def searcher(self, log: Log) -> NearestSearch:
        """The search ``graph_query`` fuses with its words (``gate.reads.recall.Nearest``):
        the vectors opened, and the model loaded, at the first question, not at start."""
        return NearestSearch(self, log)


class NearestSearch:
    """``(text, k, kind) -> [(identity, similarity)]`` over the vectors the follower keeps."""

    def __init__(self, settings: EmbeddingSettings, log: Log) -> None:
        self._settings, self._log = settings, log
        self._vectors: VectorProjector | None = None
        self._lock = threading.Lock()

    def __call__(self, text: str, k: int, kind: str) -> Sequence[tuple[str, float]]:
        with self._lock:
            if self._vectors is None:
                self._vectors = self._settings.open(VECTORS, self._log)
            return [(s.identity, s.similarity) for s in self._vectors.nearest(text, k, kind)]
