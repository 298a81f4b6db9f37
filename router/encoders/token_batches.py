"""A chunk of texts as the model's padded, length-sorted batches, in plain numpy.

``TokenizerSpec`` is what tokenizing needs, taken from a loaded model's fast tokenizer: its
``tokenizers`` JSON, the truncation the model asks for (``max_seq_length``) and the padding.
``plan_chunk`` tokenizes a chunk with it (the same ids as ``model.tokenizer(texts,
truncation=True, max_length=..., padding=False)``, tested) and cuts the chunk into batches
sorted longest first, each padded only to its longest row. Nothing here imports torch or
transformers, so a tokenizer worker process (``router.encoders.feed``) loads numpy and
``tokenizers`` alone; ``init_worker`` prepares one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TokenizerSpec:
    """A fast tokenizer as ``tokenizers`` JSON, with the model's truncation and padding."""

    json: str
    max_length: int
    truncation_side: str = "right"
    pad_id: int = 0
    left_pad: bool = False  # pad on the left (the tokenizer's padding_side)
    token_type_ids: bool = False  # the model takes token_type_ids (all zeros)

    @classmethod
    def of(cls, model: Any) -> TokenizerSpec | None:
        """The spec of a loaded sentence-transformers model's tokenizer; None when it is not a
        fast (``tokenizers``) one."""
        tokenizer = model.tokenizer
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None:
            return None
        names = set(getattr(tokenizer, "model_input_names", ()))
        limit = model.max_seq_length or tokenizer.model_max_length  # as transformers does
        return cls(json=backend.to_str(), max_length=int(limit),
                   truncation_side=str(getattr(tokenizer, "truncation_side", "right")),
                   pad_id=int(tokenizer.pad_token_id or 0),
                   left_pad=getattr(tokenizer, "padding_side", "right") == "left",
                   token_type_ids="token_type_ids" in names)

    def load(self) -> Any:
        """A ``tokenizers.Tokenizer`` truncating and padding as the model's tokenizer does when
        called with ``truncation=True, max_length=max_seq_length, padding=False``."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self.json)
        tokenizer.enable_truncation(self.max_length, stride=0, strategy="longest_first",
                                    direction=self.truncation_side)
        tokenizer.no_padding()
        return tokenizer


@dataclass(frozen=True)
class PlannedBatch:
    """Rows ``rows`` of a chunk (positions within it) as padded ``ids`` and their ``mask``."""

    rows: np.ndarray
    ids: np.ndarray  # int64, rows x longest
    mask: np.ndarray  # int64 attention mask, same shape


def length_order(lengths: np.ndarray) -> np.ndarray:
    """Positions longest first (stable, so equal lengths keep their input order)."""
    return np.argsort(-lengths, kind="stable")


def pad(ids: Sequence[Sequence[int]], lengths: np.ndarray, rows: np.ndarray, pad_id: int,
        left: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` of ``ids`` as an int64 matrix padded to the longest, and its attention mask."""
    counts = lengths[rows]
    width = int(counts.max()) if len(rows) else 0
    matrix = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    total = int(counts.sum())
    if total:
        flat = np.fromiter(itertools.chain.from_iterable(ids[i] for i in rows), dtype=np.int64,
                           count=total)
        row_of = np.repeat(np.arange(len(rows)), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        col = np.arange(total) - starts
        if left:
            col = col + np.repeat(width - counts, counts)
        matrix[row_of, col] = flat
        mask[row_of, col] = 1
    return matrix, mask


def batches_of(ids: Sequence[Sequence[int]], batch_size: int, pad_id: int,
               left: bool = False) -> list[PlannedBatch]:
    """Token ids of a chunk cut into length-sorted batches of ``batch_size`` rows."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    order = length_order(lengths)
    out = []
    for start in range(0, len(order), max(1, batch_size)):
        rows = order[start:start + max(1, batch_size)]
        matrix, mask = pad(ids, lengths, rows, pad_id, left)
        out.append(PlannedBatch(rows, matrix, mask))
    return out


def plan_chunk(tokenizer: Any, spec: TokenizerSpec, texts: Sequence[str],
               batch_size: int) -> list[PlannedBatch]:
    """``texts`` tokenized by ``tokenizer`` (``spec.load()``) and cut into batches."""
    encoded = tokenizer.encode_batch(list(texts), add_special_tokens=True)
    return batches_of([e.ids for e in encoded], batch_size, spec.pad_id, spec.left_pad)


_worker: tuple[Any, TokenizerSpec] | None = None  # a worker process's tokenizer and spec


def init_worker(spec: TokenizerSpec) -> None:
    """Prepare this process to tokenize: one thread (the processes are the parallelism)."""
    global _worker
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _worker = (spec.load(), spec)


def worker_plan(texts: Sequence[str], batch_size: int) -> list[PlannedBatch]:
    """``plan_chunk`` with the tokenizer ``init_worker`` loaded in this process."""
    if _worker is None:
        raise RuntimeError("init_worker was not called in this process")
    tokenizer, spec = _worker
    return plan_chunk(tokenizer, spec, texts, batch_size)
