"""A small LRU of query embeddings, so repeated turns skip the encoder."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from router.encoders.base import Embedder


class QueryCache:
    """A small LRU of query embeddings: repeated turns skip the encoder.

    Entries are keyed by a digest of the model id and the text, never by the text itself, so
    the cache holds ``size`` rows of fixed size however long the messages are."""

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._data: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(model_id: str, text: str) -> bytes:
        """The fixed-size cache key of ``text`` for ``model_id``."""
        digest = hashlib.blake2b(digest_size=16)
        digest.update(model_id.encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.digest()

    def encode(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """Rows for ``texts``; only the ones not cached go to the encoder, in one batch."""
        keys = [self.key(embedder.model_id, t) for t in texts]
        rows: dict[int, np.ndarray] = {}
        with self._lock:
            for i, key in enumerate(keys):
                hit = self._data.get(key)
                if hit is not None:
                    self._data.move_to_end(key)
                    rows[i] = hit
        missing = [i for i in range(len(texts)) if i not in rows]
        if missing:
            fresh = embedder.encode([texts[i] for i in missing])
            with self._lock:
                for row, i in enumerate(missing):
                    rows[i] = fresh[row]
                    self._data[keys[i]] = fresh[row]
                while len(self._data) > self._size:
                    self._data.popitem(last=False)
        return np.vstack([rows[i] for i in range(len(texts))])
