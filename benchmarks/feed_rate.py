"""The CPU side of a GPU build alone: how fast texts are tokenized and fed, with no model.

    python -m benchmarks.gpu_build --count 200000 --tokenize-only [--tokenize-workers N]

Makes ``--count`` texts of the benchmark catalog (``benchmarks.catalog``, seed 7: the texts a
build of ``benchmarks.write_catalog`` folders embeds; no folders are written) and times, with
the build model's own fast tokenizer:

- tokenizing and padding (``router.encoders.token_batches.plan_chunk``) in this process, as
  texts per second of wall time and per CPU-second (what one core does, whatever else runs);
- the per-batch Python of the pipeline around a model: making a batch's tensors
  (``pipeline.tensors``; pinning is CUDA-only and not timed here) and the chunk loop
  (``pipeline.run_chunk`` with a model that does nothing), per batch of a CUDA batch's size;
- the whole feed (``pipeline.encode`` with that model) tokenized on a thread (1 worker) and
  by N tokenizer processes: texts/s the model could be fed at.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from router.encoders import pipeline
from router.encoders.device import Placement
from router.encoders.feed import FEED_CHUNK
from router.encoders.token_batches import TokenizerSpec, plan_chunk

T = TypeVar("T")


class NullModel:
    """A sentence-transformers stand-in that computes nothing: the model's tokenizer, its
    length cap, and vectors of ones."""

    def __init__(self, model: Any, dimension: int) -> None:
        self.tokenizer = model.tokenizer
        self.max_seq_length = model.max_seq_length
        self._dimension = dimension

    def get_embedding_dimension(self) -> int:
        return self._dimension

    def __call__(self, features: dict[str, Any]) -> dict[str, Any]:
        import torch

        rows = int(features["input_ids"].shape[0])
        return {"sentence_embedding": torch.ones((rows, self._dimension))}


def _clocked(work: Callable[[], T]) -> tuple[T, float, float]:
    """``work()``, its wall seconds and this process's CPU seconds (all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def catalog_texts(count: int) -> list[str]:
    from benchmarks.catalog import catalog
    from router.index.vectors import embedding_text

    return [embedding_text(skill) for skill in catalog(count, 7)]


def host_line() -> str:
    from router.common.workers import usable_cpus

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"host: {usable_cpus()} usable CPUs (of {os.cpu_count()}), load average {load}"


def tokenizer_rate(spec: TokenizerSpec, texts: Sequence[str], size: int) -> str:
    tokenizer = spec.load()
    spans = list(pipeline.chunks(len(texts), FEED_CHUNK))
    planned, wall, cpu = _clocked(lambda: [plan_chunk(tokenizer, spec, texts[a:b], size)
                                           for a, b in spans])
    tokens = sum(int(b.mask.sum()) for chunk in planned for b in chunk)
    return (f"  tokenize + pad, this process: {len(texts) / wall:,.0f} texts/s wall, "
            f"{len(texts) / max(cpu, 1e-9):,.0f} texts per CPU-second (one core); "
            f"{tokens / len(texts):.1f} tokens a text")


def batch_costs(model: NullModel, texts: Sequence[str], size: int) -> str:
    """The pipeline's own per-batch work around the model, after one warm-up pass."""
    spec = TokenizerSpec.of(model)
    assert spec is not None
    chunk = texts[:4 * FEED_CHUNK]
    planned = plan_chunk(spec.load(), spec, chunk, size)
    cpu = Placement("cpu")
    out = np.empty((len(chunk), model.get_embedding_dimension()), dtype=np.float32)
    pipeline.run_chunk(model, pipeline.tensors(model, planned, False), out, cpu)
    batches, _, made = _clocked(lambda: pipeline.tensors(model, planned, False))
    _, _, ran = _clocked(lambda: pipeline.run_chunk(model, batches, out, cpu))
    per = 1e6 / len(batches)
    return (f"  per batch of {size}, no model, CPU time: tensors {made * per:,.0f} µs, chunk "
            f"loop {ran * per:,.0f} µs, {len(batches)} batches "
            f"({len(chunk) / max(made + ran, 1e-9):,.0f} texts per CPU-second; pinning is "
            f"CUDA-only, not timed)")


def forward_cost(model: Any, repeats: int = 50) -> str:
    """One forward pass of the real model on a single two-token text (one CPU thread): its
    Python and dispatch per batch, plus a few MFLOP of arithmetic (an upper bound)."""
    import torch

    ids = torch.tensor([[101, 102]])
    features = {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "token_type_ids": torch.zeros_like(ids)}
    with torch.inference_mode():
        model(dict(features))
        _, wall, cpu = _clocked(lambda: [model(dict(features)) for _ in range(repeats)])
    return (f"  the model's forward pass on a 2-token text, one thread: {cpu / repeats * 1e3:.2f} "
            f"ms CPU ({wall / repeats * 1e3:.2f} ms wall) a batch, an upper bound on its "
            f"per-batch Python and dispatch")


def _children_cpu() -> float:
    """CPU seconds of this process's ended and waited-for children (worker processes)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def feed_rate(model: NullModel, texts: Sequence[str], size: int, workers: int) -> str:
    """The whole feed with a model that does nothing: wall texts/s, and the CPU it took in
    this process (what bounds it however many workers) and in the workers."""
    how = "a thread" if workers == 1 else f"{workers} processes"
    # the build's chunk sizes; a sample of one chunk or less is cut smaller, so it goes to
    # the processes at all
    chunk = None if workers == 1 or len(texts) > FEED_CHUNK else -(-len(texts) // workers)
    children = _children_cpu()
    vectors, wall, cpu = _clocked(lambda: pipeline.encode(
        model, texts, batch_size=size, placement=Placement("cpu"), workers=workers,
        chunk=chunk))
    children = _children_cpu() - children  # the pool's processes ended with encode
    assert len(vectors) == len(texts)
    share = (f"; workers {len(texts) / children:,.0f} texts per CPU-second" if children > 0
             else "")
    return (f"  fed, tokenized on {how}, no model: {len(texts) / wall:,.0f} texts/s wall "
            f"({wall:.2f} s); this process {cpu * 1e6 / len(texts):.1f} µs CPU a text "
            f"(alone it could feed {len(texts) / cpu:,.0f} texts/s){share}")


def run(count: int, model_name: str, batch_size: int, workers: int) -> None:
    """Print the CPU-side figures for ``count`` catalog texts; ``workers`` (0: one per usable
    CPU less one, as a CUDA build) tokenizer processes for the parallel feed."""
    import torch

    from router.common.workers import usable_cpus
    from router.encoders.factory import make_embedder

    torch.set_num_threads(1)  # a GPU build computes nothing with CPU torch; no OpenMP waits
    texts = catalog_texts(count)
    loaded = make_embedder(model_name, placement=Placement("cpu"))
    real = loaded._load()  # type: ignore[attr-defined]
    model = NullModel(real, loaded.dimension)
    size = pipeline.batch_size_for(batch_size, Placement("cuda:0"))  # a CUDA batch
    spec = TokenizerSpec.of(model)
    if spec is None:
        raise SystemExit(f"error: {model_name} has no fast tokenizer")
    parallel = workers or max(2, usable_cpus() - 1)
    print(f"tokenize-only: {len(texts):,} catalog texts, the tokenizer of {model_name}, "
          f"batches of {size}; {host_line()}", flush=True)
    steps: list[Callable[[], str]] = [
        lambda: tokenizer_rate(spec, texts, size), lambda: batch_costs(model, texts, size),
        lambda: forward_cost(real), lambda: feed_rate(model, texts, size, 1),
        lambda: feed_rate(model, texts, size, parallel)]
    for step in steps:
        print(step(), flush=True)
    print(f"  {host_line()} (after)")

