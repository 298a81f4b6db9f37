"""Picks and loads an encoder: ``make_embedder`` (a model name, an optional model folder and a
backend give an ``Embedder``), and loading a model now or in the background. Which encoder a
server uses for an index version is the index's business (``router.index.query_encoder``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from router.encoders import backends
from router.encoders.base import Embedder
from router.encoders.device import Placement
from router.encoders.hashing import HashEmbedder
from router.encoders.sentence import SentenceTransformerEmbedder

log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """Where ONNX exports go when no index folder is given (``$XDG_CACHE_HOME/skill-router``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skill-router" / "onnx"


@dataclass(frozen=True)
class OnnxRun:
    """Where and how an ONNX query encoder runs: onnxruntime's intra-op ``threads`` per call,
    the CPU an int8 copy is quantized for (``router.config.Int8Cpu``), and the
    folder its exports are cached in (None: ``default_cache_dir()``)."""

    threads: int = 1
    int8_cpu: str = "auto"
    cache_dir: str | Path | None = None


def make_embedder(model: str, *, batch_size: int = 64, progress: bool = False,
                  backend: str = backends.BUILD, run: OnnxRun = OnnxRun(),
                  source: str | Path | None = None,
                  placement: Placement | None = None, tokenize_workers: int = 0) -> Embedder:
    """``hash`` / ``hash-N`` gives the test embedder; anything else is the ``backend`` named
    (``router.encoders.backends``; UnknownBackend for another name).

    An exported backend (``onnx``) runs the same model (same ``model_id``, same vectors)
    through onnxruntime, exported once into ``run.cache_dir`` (``router.encoders.onnx``) as
    ``run`` says (an int8 one, ``onnx-int8``: an int8 copy of that export, faster, with
    vectors close to but not equal to the others, quantized for the CPU ``run`` names:
    ``router.encoders.int8``); a model that cannot be exported, or a
    missing onnxruntime, falls back to sentence-transformers with a warning. ``source`` is
    the model's folder when ``model`` is an id (a fine-tuned model of an index version).
    ``placement`` (a build's resolved ``--device`` / ``--precision``) runs
    sentence-transformers on that device through the chunked pipeline
    (``router.encoders.pipeline``), tokenized by ``tokenize_workers`` processes
    (``index.tokenize_workers``); it does not change the model id or the vectors' meaning.
    """
    if backends.is_hash_model(model):
        dim = int(model.split("-", 1)[1]) if "-" in model else 256
        return HashEmbedder(dim)
    chosen = backends.backend(backend)
    if chosen.exported:
        onnx = _onnx_embedder(model, batch_size, run, source, quantized=chosen.int8)
        if onnx is not None:
            return onnx
    return SentenceTransformerEmbedder(model, batch_size=batch_size, progress=progress,
                                       path=str(source) if source is not None else None,
                                       placement=placement, tokenize_workers=tokenize_workers)


def _onnx_embedder(model: str, batch_size: int, run: OnnxRun, source: str | Path | None, *,
                   quantized: bool = False) -> Embedder | None:
    from router.encoders import onnx as onnx_embed

    try:
        import onnxruntime  # noqa: F401

        cache_dir = run.cache_dir or default_cache_dir()
        return onnx_embed.OnnxEmbedder.checked(model, cache_dir, threads=run.threads,
                                               batch_size=batch_size, source=source,
                                               quantized=quantized, int8_cpu=run.int8_cpu)
    except (ImportError, onnx_embed.UnsupportedModel) as exc:
        log.warning("ONNX encoder unavailable for %s (%s); using sentence-transformers",
                    model, exc)
        return None


def load_now(embedder: Embedder) -> None:
    """Load (and, for ONNX, export if needed) the model now rather than on the first encode."""
    prepare = getattr(embedder, "prepare", None)
    if prepare is not None:
        prepare()
    else:
        embedder.encode(["warm up"])


@contextmanager
def loading_in_background(embedder: Embedder) -> Iterator[Embedder]:
    """Load ``embedder`` on a thread while the block runs; a failed load is raised as the
    block ends. Loading a model is mostly native code that releases the GIL, so it overlaps
    well with imports and with reading an index."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load") as pool:
        loading = pool.submit(load_now, embedder)
        yield embedder
        loading.result()
