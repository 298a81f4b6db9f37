"""Picks and loads an encoder: ``make_embedder`` for builds, ``serving_embedder`` /
``query_embedder`` for a server's queries, and loading a model in the background."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from router.config import IndexConfig
from router.index.encoders.base import Embedder
from router.index.encoders.device import Placement
from router.index.encoders.hashing import HashEmbedder
from router.index.encoders.sentence import SentenceTransformerEmbedder
from router.index.recovery import startup_model
from router.index.tuned_encoder import base_of, is_tuned, locate

log = logging.getLogger(__name__)

BACKENDS = ("torch", "onnx", "onnx-int8")


def default_cache_dir() -> Path:
    """Where ONNX exports go when no index folder is given (``$XDG_CACHE_HOME/skill-router``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skill-router" / "onnx"


def make_embedder(model: str, *, batch_size: int = 64, progress: bool = False,
                  backend: str = "torch", cache_dir: str | Path | None = None,
                  threads: int = 1, source: str | Path | None = None,
                  placement: Placement | None = None) -> Embedder:
    """``hash`` / ``hash-N`` gives the test embedder; anything else is sentence-transformers.

    ``backend="onnx"`` runs the same model (same ``model_id``, same vectors) through
    onnxruntime, exported once into ``cache_dir`` (``router.index.encoders.onnx``) with
    ``threads`` intra-op threads (``"onnx-int8"``: an int8 copy of that export, faster, with
    vectors close to but not equal to the others); a model that cannot be exported, or a
    missing onnxruntime, falls back to sentence-transformers with a warning. ``source`` is
    the model's folder when ``model`` is an id (a fine-tuned model of an index version).
    ``placement`` (a build's resolved ``--device`` / ``--precision``) runs
    sentence-transformers on that device through the chunked pipeline
    (``router.index.encoders.pipeline``); it does not change the model id or the vectors'
    meaning.
    """
    if model == "hash" or model.startswith("hash-"):
        dim = int(model.split("-", 1)[1]) if "-" in model else 256
        return HashEmbedder(dim)
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; use one of {BACKENDS}")
    if backend in ("onnx", "onnx-int8"):
        onnx = _onnx_embedder(model, batch_size, cache_dir or default_cache_dir(), threads,
                              source, quantized=backend == "onnx-int8")
        if onnx is not None:
            return onnx
    return SentenceTransformerEmbedder(model, batch_size=batch_size, progress=progress,
                                       path=str(source) if source is not None else None,
                                       placement=placement)


def _onnx_embedder(model: str, batch_size: int, cache_dir: str | Path, threads: int,
                   source: str | Path | None, *, quantized: bool = False) -> Embedder | None:
    from router.index.encoders import onnx as onnx_embed

    try:
        import onnxruntime  # noqa: F401

        return onnx_embed.OnnxEmbedder.checked(model, cache_dir, threads=threads,
                                               batch_size=batch_size, source=source,
                                               quantized=quantized)
    except (ImportError, onnx_embed.UnsupportedModel) as exc:
        log.warning("ONNX encoder unavailable for %s (%s); using sentence-transformers",
                    model, exc)
        return None


def query_embedder(model: str, index_dir: str | Path, *, backend: str = "onnx",
                   batch_size: int = 64, threads: int = 1) -> Embedder:
    """The embedder a server uses for queries against the index in ``index_dir`` (an ONNX
    export is cached in ``<index_dir>/.onnx``). A fine-tuned model is loaded from the
    ``encoder/`` of a version that holds it, verified against its manifest's checksums first
    (IndexCorrupt when no version holds an intact copy)."""
    source = locate(index_dir, model) if is_tuned(model) else None
    return make_embedder(model, batch_size=batch_size, backend=backend,
                         cache_dir=Path(index_dir) / ".onnx", threads=threads, source=source)


def load_now(embedder: Embedder) -> None:
    """Load (and, for ONNX, export if needed) the model now rather than on the first encode."""
    prepare = getattr(embedder, "prepare", None)
    if prepare is not None:
        prepare()
    else:
        embedder.encode(["warm up"])


def serving_embedder(index_dir: str | Path, config: IndexConfig) -> Embedder:
    """The query embedder ``config`` asks for, for the model the index in ``index_dir`` was
    built with; not loaded yet (see ``loading_in_background``). When that is a fine-tuned model
    no version holds intact, the base model's (the damaged version will not be served; the
    Engine switches to the model of the version it serves)."""
    from router.errors import IndexUnavailable

    model = startup_model(index_dir)
    try:
        return _configured(model, index_dir, config)
    except IndexUnavailable as exc:
        log.error("cannot load the query encoder of %s (%s); starting with %s", model, exc,
                  base_of(model))
        return _configured(base_of(model), index_dir, config)


def _configured(model: str, index_dir: str | Path, config: IndexConfig) -> Embedder:
    return query_embedder(model, index_dir, backend=config.query_backend,
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


def switch_query_embedder(model: str, index_dir: str | Path | None, config: IndexConfig,
                          version: str) -> Embedder:
    """The query encoder of ``model``, loaded now, for serving a version (``version``) built
    with another model than the one being served; IndexUnavailable when it cannot load (the
    server then keeps serving what it served)."""
    from router.errors import IndexUnavailable

    if index_dir is None:
        raise IndexUnavailable(f"index {version} uses model {model!r}; without an index "
                               "folder its query encoder cannot be loaded")
    try:
        embedder = _configured(model, index_dir, config)
        load_now(embedder)
    except IndexUnavailable:
        raise
    except (OSError, RuntimeError, ValueError, ImportError) as exc:
        raise IndexUnavailable(f"index {version} uses model {model!r}, whose query encoder "
                               f"cannot be loaded: {exc}") from exc
    log.info("query encoder switched to %s for index %s", model, version)
    return embedder
