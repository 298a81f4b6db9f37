"""Dense search at scales past the benchmark's catalogs (e.g. 1M vectors).

    python scripts/dense_scale.py 1000000

Builds the index kind ``router.index.dense`` chooses for N vectors (HNSW from 20,000) over the
benchmark's skill vectors: the real embeddings cached by ``make bench`` (10,000) and, past
them, real rows plus noise (as the benchmark does for 100k). Reports the build time, the
index size, single-query search latency at the routing depth (one OpenMP thread, as the
server runs) and recall@10 against exact search. The derived rows serve latency and memory;
recall over them is a sanity check, not a real-text figure (``make bench`` measures that).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from router import bench_catalog, bench_measure
from router.bench import BenchOptions
from router.bench_encoders import skill_vectors
from router.index import dense
from router.index.embed import prepare_query_embedder, query_embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of vectors")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="bench_results", help="the benchmark's folder")
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
    times = []
    for query in queries:
        started = time.perf_counter()
        dense.search(index, query, 50)
        times.append(time.perf_counter() - started)
    exact = dense.build(vectors, dense.FLAT)
    found = [len(set(dense.search(index, q, 10)[0].tolist())
                 & set(dense.search(exact, q, 10)[0].tolist())) / 10 for q in queries]
    import faiss

    print(json.dumps({"vectors": made, "kind": dense.kind_of(index),
                      "build_s": round(build_s, 1),
                      "index_bytes": len(faiss.serialize_index(index)),
                      "vector_bytes": int(vectors.nbytes),
                      "search_k50": bench_measure.summary(times),
                      "recall_at_10_vs_exact": round(float(np.mean(found)), 4)}, indent=1))


if __name__ == "__main__":
    main()
