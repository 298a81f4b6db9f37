"""A small LRU of query embeddings, so repeated turns skip the encoder."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from router.encoders.base import Embedder


class QueryCache:
    """A small LRU of query embeddings: repeated turns skip the encoder.

    Entries are keyed by a digest of the model id, the caller's name (``scope``) and the text,
    never by the text itself, so the cache holds ``size`` rows of fixed size however long the
    messages are; a text one caller sent is a miss for every other (its hit would tell them,
    by its time, that someone sent it)."""

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._data: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(model_id: str, text: str, scope: str = "") -> bytes:
        """The fixed-size cache key of ``text`` for ``model_id`` and caller ``scope``."""
        digest = hashlib.blake2b(digest_size=16)
        for part in (model_id, scope):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.digest()

    def missing(self, model_id: str, texts: Sequence[str], scope: str = "") -> list[int]:
        """The positions of ``texts`` not cached for ``scope`` (what ``encode`` would embed)."""
        keys = [self.key(model_id, t, scope) for t in texts]
        with self._lock:
            return [i for i, key in enumerate(keys) if key not in self._data]

    def encode(self, embedder: Embedder, texts: Sequence[str], scope: str = "", *,
               batch: int = 0, before: Callable[[], None] | None = None) -> np.ndarray:
        """Rows for ``texts``; only the ones not cached for ``scope`` go to the encoder, in
        batches of ``batch`` (0: one batch), each kept as it is made. ``before`` runs before
        each batch (an exception it raises stops the work; what was made stays cached)."""
        keys = [self.key(embedder.model_id, t, scope) for t in texts]
        rows: dict[int, np.ndarray] = {}
        with self._lock:
            for i, key in enumerate(keys):
                hit = self._data.get(key)
                if hit is not None:
                    self._data.move_to_end(key)
                    rows[i] = hit
        missing = [i for i in range(len(texts)) if i not in rows]
        step = batch or max(1, len(missing))
        for start in range(0, len(missing), step):
            if before is not None:
                before()
            chunk = missing[start:start + step]
            fresh = embedder.encode([texts[i] for i in chunk])
            with self._lock:
                for row, i in enumerate(chunk):
                    rows[i] = fresh[row]
                    self._data[keys[i]] = fresh[row]
                while len(self._data) > self._size:
                    self._data.popitem(last=False)
        return np.vstack([rows[i] for i in range(len(texts))])
