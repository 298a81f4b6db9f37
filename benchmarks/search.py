"""Dense search on the benchmark's index: exact flat float32 against the fp16 scan, the 4-bit
product codes and HNSW, on real request embeddings (latency, bytes, recall)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from benchmarks import measure as bench_measure
from router.index import dense


def search_figures(vectors: np.ndarray, flat: Any, queries: np.ndarray,
                    real: int) -> dict[str, Any]:
    """Exact float32 flat vs the fp16 scan vs the 4-bit product codes vs HNSW for real request
    embeddings: single-query latency at the routing depth (the two scans with the exact
    rescoring a Route gives their shortlists), index bytes, and recall of exact search (over
    the ``real`` embedded rows only): HNSW's at 10, the scans' at the routing depth."""
    import faiss

    out: dict[str, Any] = {}
    started = time.perf_counter()
    hnsw = dense.build(vectors, dense.HNSW)
    out["hnsw_build_s"] = round(time.perf_counter() - started, 2)
    fp16 = dense.build(vectors, dense.FLAT16)
    started = time.perf_counter()
    pq4 = dense.build(vectors, dense.FLAT_PQ)  # the fp16 scan where its build check fails
    out["pq4_build_s"] = round(time.perf_counter() - started, 2)
    scans = (("flat", flat, None), ("flat_fp16", fp16, vectors), ("flat_pq4", pq4, vectors),
             ("hnsw", hnsw, None))
    for name, index, rescore in scans:
        times = []
        for q in queries:
            t = time.perf_counter()
            dense.search(index, q, 50, rescore=rescore)
            times.append(time.perf_counter() - t)
        out[name] = {**bench_measure.summary(times), "kind": dense.kind_of(index),
                     "bytes": len(faiss.serialize_index(index))}
    if real < len(vectors):
        flat = dense.build(vectors[:real], dense.FLAT)
        fp16 = dense.build(vectors[:real], dense.FLAT16)
        pq4 = dense.build(vectors[:real], dense.FLAT_PQ)
        hnsw = dense.build(vectors[:real], dense.HNSW)
    out["hnsw"]["recall_at_10"] = recall(hnsw, flat, queries, 10)
    out["flat_fp16"]["recall_at_50"] = recall(fp16, flat, queries, 50)
    out["flat_pq4"]["recall_at_50"] = recall(pq4, flat, queries, 50, vectors[:real])
    for name in ("hnsw", "flat_fp16", "flat_pq4"):
        out[name]["recall_rows"] = real
    return out


def recall(index: Any, exact: Any, queries: np.ndarray, k: int,
            rescore: np.ndarray | None = None) -> float:
    found = [len(set(dense.search(index, q, k, rescore=rescore)[0].tolist()) &
                 set(dense.search(exact, q, k)[0].tolist())) / k for q in queries]
    return round(float(np.mean(found)), 4)
