"""The performance benchmark: ``make bench`` or ``python -m benchmarks [--sizes ...]`` from the
repository root (a table on stdout, JSON in a file). Not part of the installed package."""

from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="measure Route latency, throughput, build rate and "
                                            "cold start on synthetic catalogs")
    p.add_argument("--config", help="YAML configuration file (env SKILL_ROUTER_* overrides)")
    p.add_argument("--sizes", default="1000,10000,100000",
                   help="catalog sizes, comma-separated (default 1000,10000,100000; the "
                        "first 100k run embeds its skills once, ~15 min, then reuses them)")
    p.add_argument("--quick", action="store_true",
                   help="fewer requests per figure (fits in a few minutes with small sizes)")
    p.add_argument("--out", default="bench_results", help="folder for the JSON results")
    p.add_argument("--model", help="embedding model (default: index.model)")
    p.add_argument("--embed-limit", type=int, metavar="N",
                   help="embed at most N catalog skills for real; the rest get a real "
                        "vector plus noise (latency and memory only; recall uses real rows)")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return cmd_bench(build_parser().parse_args(argv))


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError as exc:
        raise SystemExit(f"error: --sizes must be integers: {exc}") from exc
    if not sizes or min(sizes) < 100:
        raise SystemExit("error: --sizes needs catalog sizes of at least 100")
    return sizes


def cmd_bench(args: argparse.Namespace) -> int:
    from benchmarks.openmp import passive_wait

    wait_policy = passive_wait()  # before torch and faiss load (benchmarks.openmp says why)
    from benchmarks.options import BenchOptions
    from benchmarks.run import run
    from router.config import load_config

    config = load_config(getattr(args, "config", None))
    options = BenchOptions(sizes=_sizes(args.sizes), quick=args.quick, out_dir=Path(args.out),
                           model=args.model or config.index.model,
                           embed_limit=args.embed_limit,
                           query_backend=config.index.query_backend)
    started = time.perf_counter()
    results: dict[str, Any] = {"options": {"sizes": list(options.sizes), "quick": options.quick,
                                           "model": options.model,
                                           "embed_limit": options.embed_limit,
                                           "query_backend": options.query_backend,
                                           "omp_wait_policy": wait_policy},
                               "machine": {"cpus": _cpus(), "python": platform.python_version(),
                                           "load_avg_start": _load()}}
    results.update(run(options))
    results["machine"]["load_avg_end"] = _load()
    results["seconds"] = round(time.perf_counter() - started, 1)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = options.out_dir / f"bench-{stamp}.json"
    path.write_text(json.dumps(results, indent=1), encoding="utf-8")
    _print(results)
    print(f"results written to {path}")
    return 0


def _print(results: dict[str, Any]) -> None:
    from benchmarks.run import rows

    enc = results["encoder"]
    print("encoder, one query (p50 ms): " + ", ".join(
        f"{k} {v['p50_ms']:.2f}" for k, v in enc.items() if isinstance(v, dict) and "p50_ms" in v))
    print(f"batch encode: torch {enc['batch_rate_torch_per_s']:.0f}/s, "
          f"onnx {enc['batch_rate_onnx_2t_per_s']:.0f}/s; concurrency: {enc['concurrency']}")
    alone = enc["torch_alone"]
    print(f"torch floor encode p50, in this process ({results['options']['omp_wait_policy']} "
          f"wait): 1t {enc['torch_1t']['p50_ms']:.2f}, 2t {enc['torch_2t']['p50_ms']:.2f} ms, "
          f"floor on {enc['torch_threads_for_floor']}t; alone in a fresh process "
          f"({alone['omp_wait_policy']} wait): 1t {alone['torch_1t']['p50_ms']:.2f}, "
          f"2t {alone['torch_2t']['p50_ms']:.2f} ms")
    build = results["build"]
    print(f"build: {build['build_per_s']:.0f} skills/s vs raw encode "
          f"{build['raw_encode_per_s']:.0f}/s ({build['build_vs_raw']:.2f}x)")
    for label, value in rows(results):
        print(f"{label:38} {value}")
    print(f"load average {results['machine']['load_avg_start']} -> "
          f"{results['machine']['load_avg_end']} (shared machine: compare ratios in one run)")


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


def _load() -> list[float]:
    import os

    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


if __name__ == "__main__":
    sys.exit(main())
