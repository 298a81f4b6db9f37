"""sentence-transformers on torch: the build-time encoder, and the query encoder when
``index.query_backend`` is ``torch``. torch loads on first use."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from router.config import DEFAULT_MODEL
from router.encoders.base import load_sentence_model, normalise, resolve_model_path
from router.encoders.device import Placement

log = logging.getLogger(__name__)


class SentenceTransformerEmbedder:
    """sentence-transformers on torch. Loads the model lazily, thread-safe.

    Given a ``placement`` (a build: ``router.encoders.device``), the model loads on that
    device and ``encode`` runs the chunked, length-sorted pipeline
    (``router.encoders.pipeline``), which shows its own progress bar, its texts tokenized by
    ``tokenize_workers`` processes (``router.encoders.feed.worker_count``: 0 is one per usable
    CPU less one on CUDA, none on the CPU); without one it is plain
    ``SentenceTransformer.encode`` on the CPU (queries)."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64,
                 progress: bool = False, *, path: str | None = None,
                 loaded: Any = None, placement: Placement | None = None,
                 tokenize_workers: int = 0) -> None:
        self._model_name = model
        self._path = path  # where the weights are, when ``model`` is an id, not a name/path
        self._batch_size = batch_size
        self._progress = progress
        self._model: Any = loaded  # an already loaded SentenceTransformer (a tuned model)
        self._lock = threading.Lock()
        self.placement = placement
        self._tokenize_workers = tokenize_workers  # index.tokenize_workers (0: by device)

    @property
    def own_progress(self) -> bool:
        """True when ``encode`` takes a whole catalog at once and reports progress itself."""
        return self.placement is not None

    def build_record(self) -> dict[str, str]:
        """Device and precision of a build (informational, in the manifest)."""
        return (self.placement or Placement()).record()

    @property
    def model_id(self) -> str:
        return self._model_name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self._path or resolve_model_path(self._model_name)
                log.info("loading embedding model %s from %s", self._model_name, path)
                device = self.placement.device if self.placement else "cpu"
                self._model = load_sentence_model(path, device)
            return self._model

    @property
    def dimension(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None)
        getter = getter or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.placement is not None:
            from router.encoders import feed, pipeline

            workers = feed.worker_count(self._tokenize_workers, self.placement.on_cuda)
            return pipeline.encode(model, texts, batch_size=self._batch_size,
                                   placement=self.placement, progress=self._progress,
                                   workers=workers)
        vectors = model.encode(list(texts), batch_size=self._batch_size,
                               normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=self._progress)
        return normalise(vectors)
