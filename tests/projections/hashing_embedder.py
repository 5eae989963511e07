"""A small deterministic embedder for the tests: each word hashed into one of 64
dimensions with a sign (the hashing trick). A real implementation of the protocol — texts
that share words are near, texts that share none are orthogonal or nearly so — that needs
no model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from writegate.projections.vectors.contract import EmbedderUnavailable, Vectors, unit_rows

_WORD = re.compile(r"[^\W_]+")


class HashingEmbedder:
    dimensions = 64

    def __init__(self, dimensions: int = 64) -> None:
        self.dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-{self.dimensions}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest())
                sign = 1.0 if digest & 1 else -1.0
                rows[row, (digest >> 1) % self.dimensions] += sign
        return unit_rows(rows)


class WideHashingEmbedder(HashingEmbedder):
    """Another embedder (another name, other vectors): a store must not mix the two."""

    def __init__(self) -> None:
        super().__init__(96)


class FilesGoneEmbedder(HashingEmbedder):
    """Installed, but its model's files are not (as ``wordllama`` says when its wheel lacks
    them): it loads, and refuses its first text."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbedderUnavailable("embedder 'files-gone': its model files are not installed")
