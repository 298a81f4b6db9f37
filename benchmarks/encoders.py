"""Encoder figures for the benchmark, and cached skill vectors for its synthetic catalogs."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmarks import catalog as bench_catalog
from benchmarks import measure as bench_measure
from benchmarks import torch_alone
from router.encoders.base import Embedder
from router.index.query_encoder import query_embedder
from router.index.vectors import embedding_text
from router.skills.model import Skill

if TYPE_CHECKING:
    from benchmarks.options import BenchOptions

log = logging.getLogger(__name__)


class CachedEmbedder:
    """Serves precomputed rows for known texts (the benchmark's catalogs); any other text (the
    off-topic requests a build calibrates its gate on) is encoded by ``fallback``."""

    def __init__(self, model: str, skills: Sequence[Skill], vectors: np.ndarray,
                 fallback: Embedder) -> None:
        self._model = model
        self._rows = {embedding_text(s): i for i, s in enumerate(skills)}
        self._vectors = vectors
        self._fallback = fallback

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        unknown = [i for i, t in enumerate(texts) if t not in self._rows]
        known = [i for i, t in enumerate(texts) if t in self._rows]
        if known:
            out[known] = self._vectors[[self._rows[texts[i]] for i in known]]
        if unknown:
            out[unknown] = self._fallback.encode([texts[i] for i in unknown])
        return out


def _digest(texts: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


def skill_vectors(options: BenchOptions, size: int,
                  onnx_cache: Path) -> tuple[np.ndarray, dict[str, Any]]:
    """Vectors of the first ``size`` synthetic skills, and how they were made.

    Up to ``options.embed_limit`` skills are real embeddings: read from ``<out>/.cache`` if a
    file there covers them, else embedded now with the ONNX encoder (the torch vectors) and
    saved. Skills past the limit get a real row plus noise (cosine about 0.85 to it): good
    for latency and memory at scale, not for recall, which is measured on real rows only.
    """
    embedded = min(size, options.embed_limit or size)
    real = _real_vectors(options, embedded, onnx_cache)
    info = {"embedded": embedded, "synthesised": size - embedded}
    if embedded == size:
        return real, info
    rng = np.random.default_rng(options.seed)
    extra = real[np.arange(embedded, size) % embedded]
    extra = extra + rng.normal(0.0, 0.032, extra.shape).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    return np.vstack([real, extra]).astype(np.float32), info


def _real_vectors(options: BenchOptions, size: int, onnx_cache: Path) -> np.ndarray:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", options.model)
    cache = options.out_dir / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    for path in sorted(cache.glob(f"vectors-{slug}-s{options.seed}-*.npy")):
        count, digest = path.stem.rsplit("-", 2)[-2:]
        if int(count) >= size:
            texts = [embedding_text(s) for s in bench_catalog.catalog(int(count), options.seed)]
            if _digest(texts) == digest:
                log.info("reusing cached skill vectors %s", path)
                return np.asarray(np.load(path)[:size], dtype=np.float32)
    texts = [embedding_text(s) for s in bench_catalog.catalog(size, options.seed)]
    encoder = query_embedder(options.model, onnx_cache.parent, backend="onnx", threads=2)
    started = time.perf_counter()
    vectors = encoder.encode(texts)
    log.info("embedded %d synthetic skills in %.0fs", size, time.perf_counter() - started)
    np.save(cache / f"vectors-{slug}-s{options.seed}-{size}-{_digest(texts)}.npy", vectors)
    return vectors


def encoder_figures(options: BenchOptions, torch: Embedder, onnx_dir: Path,
                    queries: list[str]) -> dict[str, Any]:
    """Single-query latency per backend and thread count; batch-encode rates; and concurrent
    single encodes (a thread pool) against micro-batches of 8 in one encode call."""
    import torch as torch_lib

    out: dict[str, Any] = torch_alone.per_thread(torch, {1: queries[:25], 2: queries[25:50]})
    chunk = iter(range(50, len(queries), 25))
    best = min((1, 2), key=lambda n: float(out[f"torch_{n}t"]["p50_ms"]))
    torch_lib.set_num_threads(best)  # the floor gets torch's better setting in this run
    out["torch_threads_for_floor"] = best
    # The same messages in a fresh process under libgomp's default (spinning) wait policy:
    # what the floor would cost alone without this process's passive one.
    out["torch_alone"] = torch_alone.in_child(options.model, queries[:50])
    onnx = {n: query_embedder(options.model, onnx_dir, threads=n) for n in (1, 2)}
    for threads, encoder in onnx.items():
        start = next(chunk)
        out[f"onnx_{threads}t"] = bench_measure.latencies(_single(encoder),
                                                          queries[start:start + 25])
    docs = [embedding_text(s) for s in bench_catalog.catalog(256, options.seed + 2)]
    out["batch_rate_torch_per_s"] = round(bench_measure.rate(torch.encode, docs), 1)
    out["batch_rate_onnx_2t_per_s"] = round(bench_measure.rate(onnx[2].encode, docs), 1)
    out["concurrency"] = _pool_vs_batches(onnx[1], onnx[2], queries[100:196])
    return out


def _single(encoder: Embedder) -> Callable[[str], object]:
    def call(text: str) -> object:
        return encoder.encode([text])

    return call


def _pool_vs_batches(one: Embedder, two: Embedder, texts: list[str]) -> dict[str, float]:
    """Queries per second: 2 threads encoding one query each (1 intra-op thread), vs
    batches of 8 queries per encode call on 1 and on 2 intra-op threads."""

    def worker(part: list[str]) -> None:
        for text in part:
            one.encode([text])

    half = len(texts) // 2
    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(texts[i * half:(i + 1) * half],))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {"pool_2x1t_qps": round(2 * half / (time.perf_counter() - started), 1)}
    for name, encoder in (("batch8_1t_qps", one), ("batch8_2t_qps", two)):
        started = time.perf_counter()
        for i in range(0, len(texts), 8):
            encoder.encode(texts[i:i + 8])
        out[name] = round(len(texts) / (time.perf_counter() - started), 1)
    return out
