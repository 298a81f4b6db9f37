"""The dense (FAISS) side of the index: exact inner product on normalised vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _faiss() -> Any:
    import faiss

    return faiss


def build(vectors: np.ndarray) -> Any:
    """An exact inner-product index; on L2-normalised rows that is cosine similarity."""
    faiss = _faiss()
    index = faiss.IndexFlatIP(int(vectors.shape[1]))
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def save(index: Any, path: Path) -> None:
    _faiss().write_index(index, str(path))


def load(path: Path) -> Any:
    return _faiss().read_index(str(path))


def search(index: Any, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` ids and scores for one normalised query row; drops FAISS's -1 padding."""
    k = min(k, int(index.ntotal))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores, ids = index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k)
    keep = ids[0] >= 0
    return ids[0][keep].astype(np.int64), scores[0][keep]


def search_many(index: Any, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top-``k`` ids and scores for each normalised query row, in one batched search."""
    k = min(k, int(index.ntotal))
    if k <= 0 or len(queries) == 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))] * len(queries)
    scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    return [(row_ids[row_ids >= 0].astype(np.int64), row_scores[row_ids >= 0])
            for row_ids, row_scores in zip(ids, scores, strict=True)]


def set_threads(n: int) -> None:
    """Single queries are fastest on one OpenMP thread on small machines."""
    _faiss().omp_set_num_threads(n)
