"""Latency, throughput, build and start-up figures on synthetic catalogs (`make bench`).

For each catalog size: Route p50/p99 in-process and over gRPC on loopback (one client; each
gRPC Route split into the server's own time, from its ``server-timing`` trailer, and the rest:
``benchmarks.door``),
throughput at 8 and 32 concurrent calls, the *floor* in the same run (one sentence-transformers
encode of the query + one exact FAISS search, the naive in-process loop), the bare encode of
each in-process Route's message by the serving encoder (so the router's own overhead shows:
in-process p50 / bare encode p50), Route for callers seeing 1% and 50% of the index
(``benchmarks.views``) and with 0, 50 and 200 project skills, first turn and cached
(``benchmarks.project``), and flat vs HNSW search (``benchmarks.search``); at the smallest
size, what recording a Route costs per feedback store (``benchmarks.stores``). Once per run:
encoder latency and batch rates (torch vs ONNX, 1 vs 2 threads, single queries vs
micro-batches), the index build rate against the raw batch-encode rate, a Reindex with nothing
changed and with one changed skill beside a full build (``benchmarks.reindex``), and cold start
(process start to first answered Route; int8 ONNX, ONNX
and torch), and what a Route's tracing hooks cost off and on (``benchmarks.tracing``). Skill
vectors for catalog indexes are computed once with the ONNX encoder (identical to torch) and
cached under ``<out>/.cache``; the build-rate figures always embed for real.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import catalog as bench_catalog
from benchmarks import door as bench_door
from benchmarks import measure as bench_measure
from benchmarks import project as bench_project
from benchmarks import reindex as bench_reindex
from benchmarks import sentences as bench_sentences
from benchmarks import stores as bench_stores
from benchmarks import tracing as bench_tracing
from benchmarks import views as bench_views
from benchmarks.encoders import CachedEmbedder, encoder_figures, skill_vectors
from benchmarks.options import BenchOptions
from benchmarks.search import search_figures
from router.builder.inputs import Carried
from router.builder.version import build_index
from router.config import Config
from router.encoders.base import Embedder
from router.encoders.factory import make_embedder
from router.engine import Engine
from router.index import dense
from router.index.query_encoder import prepare_query_embedder, query_embedder
from router.index.vectors import embedding_text
from router.routing.model import RouteQuery

log = logging.getLogger(__name__)

COLD_START_RUNS = 3  # per query backend; the median is reported


@dataclass
class _Requests:
    """Distinct request texts handed out in slices, so no phase hits the query cache."""

    texts: list[str]
    used: int = 0

    def take(self, n: int) -> list[str]:
        out = self.texts[self.used:self.used + n]
        self.used += n
        if len(out) < n:
            raise RuntimeError("ran out of distinct benchmark requests")
        return out


@dataclass
class _Run:
    options: BenchOptions
    work: Path
    torch: Embedder
    vectors: np.ndarray
    requests: _Requests
    queries: np.ndarray  # real request embeddings, for search latency and HNSW recall
    results: dict[str, Any] = field(default_factory=dict)


def run(options: BenchOptions) -> dict[str, Any]:
    """Run every measurement; returns the results (also what the JSON file holds)."""
    dense.set_threads(1)
    work = Path(tempfile.mkdtemp(prefix="skill-router-bench-"))
    try:
        torch = make_embedder(options.model, backend="torch")
        onnx_dir = work / "onnx-export"
        prepare_query_embedder(options.model, onnx_dir)
        prepare_query_embedder(options.model, onnx_dir, backend="onnx-int8")  # as `index` does
        vectors, made = skill_vectors(options, max(options.sizes), onnx_dir / ".onnx")
        pool = _Requests(bench_catalog.requests(100 * options.requests + 2000))
        queries = query_embedder(options.model, onnx_dir).encode(pool.take(200))
        state = _Run(options, work, torch, vectors, pool, queries)
        state.results["vectors"] = made
        state.results["encoder"] = encoder_figures(options, torch, onnx_dir, pool.take(200))
        state.results["tracing"] = bench_tracing.tracing_figures(options.quick)
        state.results["build"] = _build_figures(state, onnx_dir)
        state.results["sizes"] = {str(n): _size_figures(state, n, onnx_dir)
                                  for n in options.sizes}
        return state.results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _index(state: _Run, size: int, onnx_dir: Path, name: str = "index") -> Path:
    """An index of the first ``size`` synthetic skills, from cached vectors."""
    root = state.work / f"{name}-{size}"
    skills = bench_views.with_catalogs(bench_catalog.catalog(size, state.options.seed))
    cached = CachedEmbedder(state.options.model, skills, state.vectors[:size], state.torch)
    build_index(skills, [], cached, root,
                carried=Carried(catalogs=bench_views.catalog_names()))
    shutil.copytree(onnx_dir / ".onnx", root / ".onnx")
    return root


def _build_figures(state: _Run, onnx_dir: Path) -> dict[str, Any]:
    """Full build rate vs raw batch-encode rate (torch, as ``skill-router index`` builds), and
    the incremental rebuild of one changed skill in the largest catalog up to 10k, beside a
    no-op re-run (``benchmarks.reindex``)."""
    n = state.options.build_size if not state.options.quick else 300
    skills = bench_catalog.catalog(n, state.options.seed + 1)
    texts = [embedding_text(s) for s in skills]
    raw = bench_measure.rate(state.torch.encode, texts)
    started = time.perf_counter()
    build_index(skills, [], state.torch, state.work / "build-rate")
    build_rate = n / (time.perf_counter() - started)
    figures: dict[str, Any] = {"skills": n, "raw_encode_per_s": round(raw, 1),
                               "build_per_s": round(build_rate, 1),
                               "build_vs_raw": round(build_rate / raw, 3)}
    size = max([s for s in state.options.sizes if s <= 10_000] or [min(state.options.sizes)])
    skills = bench_catalog.catalog(size, state.options.seed)
    cached = CachedEmbedder(state.options.model, skills, state.vectors[:size], state.torch)
    figures["reindex"] = bench_reindex.reindex_figures(
        state.work, size, state.options.seed, cached,
        query_embedder(state.options.model, onnx_dir, backend=state.options.query_backend))
    return figures


def _size_figures(state: _Run, size: int, onnx_dir: Path) -> dict[str, Any]:
    options = state.options
    root = _index(state, size, onnx_dir)
    backend = options.query_backend  # the Routes' query encoder (index.query_backend)
    config = Config()
    engine = Engine.open(root, replace(config, index=replace(config.index,
                                                            query_backend=backend)))
    figures: dict[str, Any] = {"dense_index": dense.kind_of(engine.snapshot.dense)}
    flat = dense.build(engine.snapshot.vectors, dense.FLAT)

    def route(text: str) -> object:
        return engine.route(RouteQuery(message=text))

    def floor(text: str) -> object:
        return dense.search(flat, state.torch.encode([text])[0], 10)

    def bare_encode(text: str) -> object:  # the serving encoder alone, on the Route's message
        return engine.embedder.encode([text])

    # The server runs in its own process, as it does beside a gateway; the client here.
    http_port = bench_measure.free_port()  # the JSON door of the same server
    with bench_measure.serve_process(root, {"SKILL_ROUTER_INDEX_QUERY_BACKEND": backend},
                                     http_port=http_port) as address:
        call, close = bench_measure.grpc_route_call(address)
        pairs: list[tuple[float, float]] = []  # each gRPC Route's time and the server's own
        timed, timed_close = bench_measure.grpc_route_call(address, pairs)
        json_call, json_close = bench_measure.json_route_call(f"http://127.0.0.1:{http_port}")
        try:
            calls = {"route_in_process": route, "bare_encode": bare_encode,
                     "route_grpc": timed, "route_json": json_call,
                     "floor_torch_exact": floor}
            figures.update(bench_measure.interleaved(calls, state.requests.take(
                3 * options.requests), same={"bare_encode": "route_in_process"}))
            figures["grpc_split"] = bench_door.split_figures(pairs)
            for conc in (8, 32):
                texts = state.requests.take(max(4 * conc, options.requests))
                figures[f"throughput_{conc}"] = bench_measure.throughput(call, texts, conc)
        finally:
            close()
            timed_close()
            json_close()
    figures["views"] = bench_views.view_figures(engine, state.requests.take(
        3 * options.requests))
    figures["sentences"] = bench_sentences.sentence_figures(engine, options.requests)
    figures["project"] = bench_project.project_figures(engine, state.requests.take(
        5 * max(options.requests // 4, 10)))
    if size == min(options.sizes):  # a store's cost is the same at every size
        figures["stores"] = bench_stores.store_figures(root, config, state.requests.take(
            3 * options.requests))
    real = min(size, int(state.results["vectors"]["embedded"]))
    figures["search"] = search_figures(engine.snapshot.vectors, flat, state.queries, real)
    if size == 10_000 or (size == max(options.sizes) and 10_000 not in options.sizes):
        runs = 1 if options.quick else COLD_START_RUNS
        figures["cold_start"] = _cold_starts(root, state.requests.take(3 * runs), runs)
    return figures


def _cold_starts(root: Path, messages: list[str], runs: int) -> dict[str, Any]:
    """Per query backend, the median of ``runs`` cold starts (one sample is at the mercy of
    whatever else the machine is doing), with every run's seconds. Backends alternate."""
    samples: dict[str, list[float]] = {"onnx-int8": [], "onnx": [], "torch": []}
    for i in range(runs):
        for j, backend in enumerate(samples):
            started = bench_measure.cold_start(root, messages[len(samples) * i + j],
                                               env={"SKILL_ROUTER_INDEX_QUERY_BACKEND": backend})
            samples[backend].append(started["seconds"])
    return {backend: {"seconds": round(float(np.median(runs_s)), 3), "runs": runs_s}
            for backend, runs_s in samples.items()}


def rows(results: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(label, value) lines for the printed table."""
    for size, f in results.get("sizes", {}).items():
        for key in ("route_in_process", "bare_encode", "route_grpc", "route_json",
                    "floor_torch_exact"):
            if key in f:  # route_json: runs from before the JSON door lack it
                yield (f"{size:>7} {key}", f"p50 {f[key]['p50_ms']:.2f} ms  "
                                           f"p99 {f[key]['p99_ms']:.2f} ms")
        yield from bench_door.door_rows(size, f)
        for conc in (8, 32):
            t = f[f"throughput_{conc}"]
            yield (f"{size:>7} throughput x{conc}", f"{t['rps']:.0f} req/s  "
                                                    f"p99 {t['p99_ms']:.1f} ms")
        yield from bench_views.view_rows(size, f)
        yield from bench_project.project_rows(size, f)
        yield from bench_sentences.sentence_rows(size, f)
        yield from bench_stores.store_rows(size, f)
        ratio = f["route_grpc"]["p50_ms"] / max(f["floor_torch_exact"]["p50_ms"], 1e-9)
        yield (f"{size:>7} grpc p50 / floor p50", f"{ratio:.2f}")
        credit = floor_credit(results.get("encoder", {}))
        fair = f["route_grpc"]["p50_ms"] / max(f["floor_torch_exact"]["p50_ms"] - credit, 1e-9)
        yield (f"{size:>7} grpc p50 / floor p50 at torch's best",
               f"{fair:.2f} (floor less {credit:.2f} ms)")
        bare = f["route_in_process"]["p50_ms"] / max(f["bare_encode"]["p50_ms"], 1e-9)
        yield (f"{size:>7} in-process p50 / bare encode p50", f"{bare:.2f}")
        s = f["search"]
        kinds = ("flat", "flat_fp16", "flat_pq4", "hnsw")
        yield (f"{size:>7} search flat | fp16 | pq4 | hnsw",
               " | ".join(f"{s[k]['p50_ms']:.2f}" for k in kinds) + " ms, "
               + " | ".join(f"{s[k]['bytes'] / 1e6:.1f}" for k in kinds) + " MB"
               + ("" if s["flat_pq4"]["kind"] == dense.FLAT_PQ else " (pq4: fp16, check)"))
        yield (f"{size:>7} recall fp16@50 | pq4@50 | hnsw@10",
               f"{s['flat_fp16']['recall_at_50']:.4f} | {s['flat_pq4']['recall_at_50']:.4f}"
               f" | {s['hnsw']['recall_at_10']:.4f}")
        for backend, c in f.get("cold_start", {}).items():
            spread = " ".join(f"{r:.2f}" for r in c.get("runs", []))
            yield (f"{size:>7} cold start ({backend})", f"{c['seconds']:.2f} s median ({spread})")
    yield from _growth_rows(results.get("sizes", {}))
    yield from bench_tracing.tracing_rows(results.get("tracing", {}))
    if "reindex" in results.get("build", {}):
        yield from bench_reindex.rows(results["build"]["reindex"])


def floor_credit(encoder: dict[str, Any]) -> float:
    """How much faster torch's best encode alone (a fresh process, libgomp's default wait) was
    than the floor's own setting in this process, in ms (0 when it was not): taken off the
    floor for a ratio that never rests on a floor slower than torch can be."""
    alone = encoder.get("torch_alone")
    if not alone:
        return 0.0
    own = float(encoder[f"torch_{encoder['torch_threads_for_floor']}t"]["p50_ms"])
    best = min(float(alone[f"torch_{n}t"]["p50_ms"]) for n in (1, 2))
    return max(own - best, 0.0)


def _growth_rows(sizes: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Route p99 at each size over its p99 at the smallest, in this run."""
    if len(sizes) < 2:
        return
    first = min(sizes, key=int)
    for size, f in sizes.items():
        if size == first:
            continue
        grow = {key: f[key]["p99_ms"] / max(sizes[first][key]["p99_ms"], 1e-9)
                for key in ("route_grpc", "route_in_process")}
        yield (f"p99 growth {first} -> {size}",
               f"gRPC {grow['route_grpc']:.2f}x, in-process {grow['route_in_process']:.2f}x")
