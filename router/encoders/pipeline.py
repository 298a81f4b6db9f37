"""The build's embedding pipeline for a sentence-transformers model, on the CPU or a GPU.

Texts go in chunks (so memory stays bounded whatever the catalog's size), each tokenized,
sorted by token length and cut into batches padded only to their longest row
(``router.encoders.token_batches``) while the previous chunk runs through the model: on a
thread of the build process (chunks of ``CHUNK``; the fast tokenizer is Rust and releases the
GIL), or, with ``workers`` > 1 (``index.tokenize_workers``; a GPU build's default), in that
many tokenizer processes (``router.encoders.feed``, chunks of ``FEED_CHUNK``, a bounded number
in flight), so a many-core host keeps the GPU fed. Each batch runs through the model's own
modules (transformer, the same mean pooling over the attention mask, normalisation) under
``torch.inference_mode``, with fp16 autocast on CUDA only; on CUDA the batch tensors are pinned
on the thread and copied ``non_blocking``, and a chunk's vectors come back to the host in one
copy. Rows are L2-normalised (in float32, on the device) and written straight into the
result in input order, so the result is what ``SentenceTransformer.encode(...,
normalize_embeddings=True)`` gives (within 1e-6 on the CPU, with any number of workers,
tested), only faster.

A forward pass takes ``batch_size`` texts on the CPU and ``batch_size * CUDA_BATCH_FACTOR`` on
CUDA (``index.batch_size`` 64 -> 1024 texts per GPU batch). ``encode`` logs (INFO) how long the
model waited for tokenized chunks and how long it ran, to tell which side bounds the rate.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from router.config import Precision
from router.encoders.device import Placement
from router.encoders.feed import FEED_CHUNK, TokenizerPool
from router.encoders.token_batches import (
    PlannedBatch,
    TokenizerSpec,
    batches_of,
    plan_chunk,
)

log = logging.getLogger(__name__)

CHUNK = 50_000  # texts tokenized (and held) at once
CUDA_BATCH_FACTOR = 16  # a CUDA batch is index.batch_size times this


@dataclass(frozen=True)
class Batch:
    """Rows ``rows`` of a chunk (positions within it), as padded model inputs."""

    rows: np.ndarray
    features: dict[str, Any]  # name -> torch tensor (pinned on CUDA)


def batch_size_for(batch_size: int, placement: Placement) -> int:
    """Texts per forward pass: ``batch_size`` on the CPU, ``CUDA_BATCH_FACTOR`` times it on
    CUDA."""
    return max(1, batch_size) * (CUDA_BATCH_FACTOR if placement.on_cuda else 1)


def plan(model: Any, texts: Sequence[str], batch_size: int, pin: bool) -> list[Batch]:
    """Tokenize ``texts`` on this thread and cut them into length-sorted padded batches."""
    spec = _spec(model)
    if spec is not None:
        planned = plan_chunk(_tokenizer(model, spec), spec, texts, batch_size)
    else:  # a slow (Python) tokenizer: the same ids through transformers
        tokenizer = model.tokenizer
        encoded = tokenizer(list(texts), truncation=True, max_length=model.max_seq_length,
                            padding=False)
        planned = batches_of(encoded["input_ids"], batch_size, int(tokenizer.pad_token_id or 0),
                             getattr(tokenizer, "padding_side", "right") == "left")
    return tensors(model, planned, pin)


def tensors(model: Any, planned: Sequence[PlannedBatch], pin: bool) -> list[Batch]:
    """Planned batches as the model's input tensors (pinned for a ``non_blocking`` copy when
    ``pin``), with ``token_type_ids`` when the model takes them."""
    import torch

    types = "token_type_ids" in set(getattr(model.tokenizer, "model_input_names", ()))
    extra = _extra_features(model)
    out = []
    for batch in planned:
        arrays = {"input_ids": batch.ids, "attention_mask": batch.mask}
        if types:
            arrays["token_type_ids"] = np.zeros_like(batch.ids)
        features: dict[str, Any] = {k: torch.from_numpy(v) for k, v in arrays.items()}
        if pin:
            features = {k: v.pin_memory() for k, v in features.items()}
        out.append(Batch(batch.rows, {**features, **extra}))
    return out


def _spec(model: Any) -> TokenizerSpec | None:
    """The model's tokenizer spec, made once per model (None: not a fast tokenizer)."""
    if not hasattr(model, "_router_tokenizer_spec"):
        model._router_tokenizer_spec = TokenizerSpec.of(model)
    spec: TokenizerSpec | None = model._router_tokenizer_spec
    return spec


def _tokenizer(model: Any, spec: TokenizerSpec) -> Any:
    """A ``tokenizers.Tokenizer`` loaded from ``spec``, once per model (the model's own one
    keeps whatever truncation its last caller set)."""
    loaded = getattr(model, "_router_tokenizer", None)
    if loaded is None:
        loaded = model._router_tokenizer = spec.load()
    return loaded


def _extra_features(model: Any) -> dict[str, Any]:
    """Non-tensor entries sentence-transformers adds to its features (e.g. ``modality``)."""
    cached = getattr(model, "_router_extra_features", None)
    if cached is None:
        prepare = getattr(model, "preprocess", None) or getattr(model, "tokenize", None)
        sample = prepare(["x"]) if prepare is not None else {}
        cached = {k: v for k, v in sample.items() if isinstance(v, str)}
        model._router_extra_features = cached
    return dict(cached)


def run_chunk(model: Any, batches: Sequence[Batch], out: np.ndarray, placement: Placement,
              tick: Any = None) -> None:
    """The L2-normalised vectors of one planned chunk, written into ``out`` (its rows, in
    input order)."""
    import torch
    import torch.nn.functional as functional

    parts = []
    rows = []
    fp16 = placement.on_cuda and placement.precision == Precision.FP16
    with torch.inference_mode():
        for batch in batches:
            features = {k: v.to(placement.device, non_blocking=True) if torch.is_tensor(v) else v
                        for k, v in batch.features.items()}
            with _fp16(torch) if fp16 else contextlib.nullcontext():
                embedded = model(features)["sentence_embedding"]
            parts.append(functional.normalize(embedded.float(), p=2, dim=1))
            rows.append(batch.rows)
            if tick is not None:
                tick(len(batch.rows))
        if not parts:
            assert len(out) == 0
            return
        vectors = torch.cat(parts).cpu().numpy()  # one device -> host copy per chunk
    order = np.concatenate(rows)
    assert len(order) == len(out)
    out[order] = vectors  # straight into the result: no copy in between


def _fp16(torch: Any) -> Any:
    """fp16 autocast, on CUDA only (never entered on the CPU)."""
    return torch.autocast(device_type="cuda", dtype=torch.float16)


def dimension_of(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None)
    return int((getter or model.get_sentence_embedding_dimension)())


def chunks(count: int, size: int = CHUNK) -> Iterator[tuple[int, int]]:
    for start in range(0, count, size):
        yield start, min(count, start + size)


def encode(model: Any, texts: Sequence[str], *, batch_size: int, placement: Placement,
           progress: bool = False, chunk: int | None = None, workers: int = 1) -> np.ndarray:
    """Embed ``texts`` with ``model`` (a loaded SentenceTransformer on ``placement.device``):
    normalised float32 rows in input order. The next chunk is prepared while this one runs:
    tokenized on a thread (``workers`` 1, or texts that make one chunk), or by ``workers``
    tokenizer processes (``router.encoders.feed``; a fast tokenizer only) in chunks of
    ``FEED_CHUNK`` texts (``chunk`` replaces either size)."""
    size = batch_size_for(batch_size, placement)
    spec = _spec(model) if workers > 1 else None
    spans = list(chunks(len(texts), max(1, chunk or (FEED_CHUNK if spec else CHUNK))))
    pin = placement.on_cuda
    with contextlib.ExitStack() as stack:
        if spec is not None and len(spans) > 1:
            pool = stack.enter_context(TokenizerPool(spec, workers))
            feed = pool.planned(texts, spans, size)
            how = f"tokenized by {workers} processes"

            def prepare(span: tuple[int, int]) -> list[Batch]:
                return tensors(model, next(feed), pin)
        else:
            how = "tokenized on a thread"

            def prepare(span: tuple[int, int]) -> list[Batch]:
                return plan(model, texts[span[0]:span[1]], size, pin)
        out, waited, ran = _run(model, len(texts), spans, prepare, placement, progress)
    log.info("embedded %d texts in %d chunks on %s %s, %s: %.2fs waiting for tokenized "
             "chunks, %.2fs running the model", len(texts), len(spans), placement.device,
             placement.precision, how, waited, ran)
    return out  # each row normalised by run_chunk (in float32, on the device)


def _run(model: Any, count: int, spans: Sequence[tuple[int, int]],
         prepare: Callable[[tuple[int, int]], list[Batch]], placement: Placement,
         progress: bool) -> tuple[np.ndarray, float, float]:
    """Each span's vectors, its batches prepared on a thread one chunk ahead of the model;
    the seconds spent waiting for them and running the model."""
    out = np.empty((count, dimension_of(model)), dtype=np.float32)
    bar = _bar(count) if progress else None
    waited = ran = 0.0
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenize") as pool:
            ahead: Future[list[Batch]] | None = pool.submit(prepare, spans[0]) if spans else None
            for n, (start, end) in enumerate(spans):
                mark = time.perf_counter()
                assert ahead is not None
                planned, ahead = ahead.result(), None
                if n + 1 < len(spans):
                    ahead = pool.submit(prepare, spans[n + 1])
                waited, mark = waited + time.perf_counter() - mark, time.perf_counter()
                run_chunk(model, planned, out[start:end], placement,
                          bar.update if bar is not None else None)
                ran += time.perf_counter() - mark
    finally:
        if bar is not None:
            bar.close()
    return out, waited, ran


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="text", desc="embedding", smoothing=0.1)
