"""The fixed request texts a build encodes every time (the hub measure's probes, the gate's
off-topic requests as turns), kept per encoder object for the next build of the process: a
Reindex with the same served query encoder, or a benchmark's build encoder, does not encode
them again.

Rows are kept by the encoder object itself (never by its model's name: two encoders of one
name can make other vectors) and by the exact text, so a kept row is the one that encoder
made of that text. It is the row made in the batch that first held the text: the same text
in another batch can differ by the encoder's float noise across batches (about 1e-7).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np

from router.common.memo import Memo
from router.encoders.base import Embedder

KEPT_TEXTS = 4096  # texts kept per encoder, the least recently used dropped

_kept: weakref.WeakKeyDictionary[object, Memo[str, np.ndarray]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _memo(embedder: Embedder) -> Memo[str, np.ndarray] | None:
    with _lock:
        try:
            found = _kept.get(embedder)
            if found is None:
                found = _kept[embedder] = Memo(KEPT_TEXTS)
        except TypeError:  # an encoder that cannot be referenced weakly is not kept
            return None
        return found


def encode_kept(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.encode(texts)``, each text encoded at most once per encoder object (the
    rows it made before are reused; the rest are encoded in one batch)."""
    memo = _memo(embedder)
    if memo is None or not texts:
        return embedder.encode(list(texts))

    def fresh(todo: list[str]) -> list[np.ndarray]:
        rows = np.asarray(embedder.encode(todo), dtype=np.float32)
        rows.flags.writeable = False  # the same rows go to every later build
        return list(rows)

    return np.vstack(memo.many(texts, fresh)).astype(np.float32)
