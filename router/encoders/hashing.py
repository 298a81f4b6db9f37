"""A deterministic bag-of-words embedder for tests and dry runs."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from router.encoders.base import normalise

_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """A deterministic bag-of-words embedder (feature hashing). For tests and dry runs only.

    Texts sharing words get similar vectors, so routing logic can be tested in
    microseconds without a neural model.
    """

    def __init__(self, dimension: int = 256) -> None:
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                out[row, h % self._dimension] += 1.0 if (h >> 63) & 1 else -1.0
        return normalise(out)


