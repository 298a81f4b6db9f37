"""Running an ONNX export: its onnxruntime session and tokenizer, and texts to vectors
(mean pooling over the attention mask, then L2 normalisation, as sentence-transformers)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from router.encoders.base import normalise

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


def _pad(rows: Sequence[Sequence[int]]) -> np.ndarray:
    width = max(len(r) for r in rows)
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def open_session(folder: Path, max_length: int, threads: int) -> tuple[Any, Any]:
    """The session (``threads`` intra-op threads) and tokenizer of the export in ``folder``."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle pool threads sleep instead of spinning: on a shared machine spinning steals
    # the core another request (or process) needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(folder / MODEL_FILE), options,
                                   providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.no_padding()  # the shipped file pads to 128: 4-6x slower for short texts
    tokenizer.enable_truncation(max_length)
    return session, tokenizer


def encode_rows(state: tuple[Any, Any, dict[str, Any]], texts: Sequence[str],
                batch_size: int) -> np.ndarray:
    """Vectors of ``texts`` by ``state`` (session, tokenizer, export metadata): sorted by length,
    run ``batch_size`` at a time, each batch padded to its longest text only."""
    session, tokenizer, meta = state
    out = np.zeros((len(texts), int(meta["dimension"])), dtype=np.float32)
    if not texts:
        return out
    encodings = tokenizer.encode_batch(list(texts))
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        ids = _pad([encodings[i].ids for i in chunk])
        mask = _pad([encodings[i].attention_mask for i in chunk])
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        out[chunk] = pooled
    return normalise(out)
