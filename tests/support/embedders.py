"""Test embedders: the hashing embedder that also records every text it was asked to encode."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from router.encoders.hashing import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """``HashEmbedder`` that keeps every text it encoded, in order, in ``texts``."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().encode(texts)
