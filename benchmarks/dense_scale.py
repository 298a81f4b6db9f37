"""Dense search at scales past the benchmark's catalogs (e.g. 1M vectors).

    python -m benchmarks.dense_scale 1000000

Builds the index kind ``router.index.dense`` chooses for N vectors (HNSW from 20,000) over the
benchmark's skill vectors: the real embeddings cached by ``make bench`` (10,000) and, past
them, real rows plus noise (as the benchmark does for 100k). Reports the build time, the
index size, and per HNSW efSearch value (``--ef``) single-query search latency at the
routing depth (one OpenMP thread, as the server runs) and recall@10 against exact search.
The derived rows serve latency and memory; recall over them is pessimistic (each real row has
near-copies at cosine ~0.85, so many neighbours are near-ties), not a real-text figure
(``make bench`` measures that on real rows).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import catalog as bench_catalog
from benchmarks import measure as bench_measure
from benchmarks.encoders import skill_vectors
from benchmarks.options import BenchOptions
from router.index import dense
from router.index.query_encoder import prepare_query_embedder, query_embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of vectors")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="bench_results", help="the benchmark's folder")
    parser.add_argument("--ef", default=str(dense.HNSW_EF_SEARCH),
                        help="HNSW efSearch values to measure, comma-separated")
    args = parser.parse_args()
    options = BenchOptions(out_dir=Path(args.out), embed_limit=10_000)
    with tempfile.TemporaryDirectory() as work:
        prepare_query_embedder(options.model, work)
        vectors, made = skill_vectors(options, args.count, Path(work) / ".onnx")
        queries = query_embedder(options.model, work).encode(
            bench_catalog.requests(args.queries))
    started = time.perf_counter()
    index = dense.build(vectors)
    build_s = time.perf_counter() - started
    dense.set_threads(1)
    exact = dense.build(vectors, dense.FLAT)
    truth = [set(dense.search(exact, q, 10)[0].tolist()) for q in queries]
    del exact
    import faiss

    searches = {}
    for ef in (int(e) for e in args.ef.split(",")):
        if hasattr(index, "hnsw"):
            index.hnsw.efSearch = ef
        times = []
        for query in queries:
            started = time.perf_counter()
            dense.search(index, query, 50)
            times.append(time.perf_counter() - started)
        found = [len(set(dense.search(index, q, 10)[0].tolist()) & t) / 10
                 for q, t in zip(queries, truth, strict=True)]
        searches[f"ef_{ef}"] = {"k50": bench_measure.summary(times),
                                "recall_at_10_vs_exact": round(float(np.mean(found)), 4)}
    print(json.dumps({"vectors": made, "kind": dense.kind_of(index),
                      "build_s": round(build_s, 1),
                      "index_bytes": len(faiss.serialize_index(index)),
                      "vector_bytes": int(vectors.nbytes), "search": searches}, indent=1))


if __name__ == "__main__":
    main()
