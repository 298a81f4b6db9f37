"""The query encoder of an index folder: which encoder a server uses for the version it serves
(``serving_embedder``, ``query_embedder``), exporting it at index time
(``prepare_query_embedder``) and switching to another when a version built with another model
is served (``switch_query_embedder``). A fine-tuned model is loaded from the ``encoder/`` of a
version that holds it (``router.index.versions.encoder``); the encoders themselves are
``router.encoders``."""

from __future__ import annotations

import logging
from pathlib import Path

from router.config import IndexConfig
from router.encoders import backends
from router.encoders.base import Embedder
from router.encoders.factory import OnnxRun, load_now, make_embedder
from router.index.versions.encoder import base_of, is_tuned, locate
from router.index.versions.recovery import startup_model

log = logging.getLogger(__name__)


def query_embedder(model: str, index_dir: str | Path, *, backend: str = backends.ONNX.name,
                   batch_size: int = 64, threads: int = 1, int8_cpu: str = "auto") -> Embedder:
    """The embedder a server uses for queries against the index in ``index_dir`` with the
    ``backend`` named (``router.encoders.backends``; the float32 ONNX export when none is, a
    server names ``index.query_backend``; an export is cached in ``<index_dir>/.onnx``).
    A fine-tuned model is loaded from the
    ``encoder/`` of a version that holds it, verified against its manifest's checksums first
    (IndexCorrupt when no version holds an intact copy)."""
    source = locate(index_dir, model) if is_tuned(model) else None
    return make_embedder(model, batch_size=batch_size, backend=backend,
                         run=OnnxRun(threads, int8_cpu, Path(index_dir) / ".onnx"),
                         source=source)


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
                          batch_size=config.batch_size, threads=config.query_threads,
                          int8_cpu=config.int8_cpu)


def prepare_query_embedder(model: str, index_dir: str | Path, *,
                           backend: str = backends.ONNX.name, int8_cpu: str = "auto") -> None:
    """Export the query encoder now (at index time; an int8 copy is quantized and checked
    here), so a server's first request is fast. A backend with nothing to export
    (sentence-transformers) is left to load in the server."""
    embedder = query_embedder(model, index_dir, backend=backend, int8_cpu=int8_cpu)
    if hasattr(embedder, "prepare"):
        load_now(embedder)


def gate_encoder(model: str, index_dir: str | Path, config: IndexConfig) -> Embedder | None:
    """The query encoder a build calibrates the gate with, loaded (an int8 copy is made and
    checked here), when its vectors are not the build encoder's (an int8 backend); None for
    a full-precision backend, whose vectors are the build encoder's, and for the hashing test
    embedder."""
    if not backends.backend(config.query_backend).int8 or backends.is_hash_model(model):
        return None
    embedder = _configured(model, index_dir, config)
    load_now(embedder)
    return embedder


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
