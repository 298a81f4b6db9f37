"""Each stage of a whole index build on the available device, to see which one dominates.

    python -m benchmarks.gpu_build --count 1000000 [--device auto|cpu|cuda] [--precision fp16]
    python -m benchmarks.gpu_build --count 20000 --model hash     # the non-embedding stages
    python -m benchmarks.gpu_build --count 1000000 --catalog DIR --device cuda --precision fp16 \
        --embedding-only --compare-cpu 2000                         # embedding and its cosine
    python -m benchmarks.gpu_build --count 200000 --tokenize-only   # the CPU side, no model

Writes ``--count`` synthetic skill folders (``benchmarks.write_catalog``; or reuses
``--catalog DIR``), then times, one after another, the stages a build runs: discovery of the
folders, the skill files' digests, the skill folders' example files, embedding (the build
pipeline on ``--device``, texts/s), BM25, FAISS (HNSW from 20,000 vectors) and writing the
version's files (records, vectors, FAISS, BM25, checksums); ``--embedding-only`` stops after
the embedding. Discovery, digests, examples and
the BM25 words run over ``--build-workers`` processes (``index.build_workers``; 0 = one per
usable CPU, 1 = serial; the processes start inside the discovery stage). ``--whole``
then times a real ``skill-router index`` of the same folders (folders to ``CURRENT``) in a
fresh process; ``--compare-cpu N`` embeds N of the texts (spread evenly over the catalog)
again with plain CPU fp32 sentence-transformers and prints the minimum cosine to the build's
vectors (the stated tolerance: >= 0.9995) and how many of the top 5 of ``TOP_REQUESTS``
synthetic requests (encoded on the CPU, as a server does) among those N skills the two sets of
vectors share. ``--tokenize-workers N`` sets the embedding's tokenizer processes
(``index.tokenize_workers``; 0: one per usable CPU less one on CUDA, none on the CPU).
``--tokenize-only`` writes no folders and runs no model: it times the CPU side
alone on ``--count`` catalog texts (``benchmarks.feed_rate``: tokenizing per core, the
per-batch Python, the feed on a thread and from ``--tokenize-workers`` processes).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from benchmarks.write_catalog import write
from router.config import DEFAULT_MODEL, DiscoveryConfig

T = TypeVar("T")
TOLERANCE = 0.9995  # min cosine of a build's vectors to CPU fp32 (docs/operations.md)
TOP_REQUESTS = 500  # requests whose top 5 among the compared skills are compared


def _timed(name: str, times: dict[str, float], work: Callable[[], T]) -> T:
    started = time.perf_counter()
    result = work()
    times[name] = time.perf_counter() - started
    print(f"  {name:<10} {times[name]:9.2f} s", flush=True)
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, required=True, help="synthetic skills to build")
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="embedding model ('hash': isolate the other stages)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "fp16"))
    parser.add_argument("--batch-size", type=int, default=64,
                        help="index.batch_size (a CUDA batch is 16 times it)")
    parser.add_argument("--build-workers", type=int, default=0, metavar="N",
                        help="processes for the per-skill stages (0: one per usable CPU)")
    parser.add_argument("--catalog", type=Path, help="an existing catalog folder to reuse")
    parser.add_argument("--whole", action="store_true",
                        help="also time `skill-router index` end to end in a fresh process")
    parser.add_argument("--compare-cpu", type=int, default=0, metavar="N",
                        help="check N vectors against plain CPU fp32 sentence-transformers")
    parser.add_argument("--embedding-only", action="store_true",
                        help="time discovery and the embedding only (no digests, examples, "
                             "BM25, FAISS or writing)")
    parser.add_argument("--tokenize-workers", type=int, default=0, metavar="N",
                        help="tokenizer processes feeding the model (0: one per usable CPU "
                             "less one on CUDA, none on the CPU)")
    parser.add_argument("--tokenize-only", action="store_true",
                        help="time the CPU side alone (tokenizing, per-batch Python, the feed "
                             "from 1 and from --tokenize-workers processes) with no model run "
                             "and no folders written")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.tokenize_workers < 0:
        raise SystemExit("error: --tokenize-workers must be >= 0")
    if args.tokenize_only:
        from benchmarks import feed_rate

        if args.model.startswith("hash"):
            raise SystemExit("error: --tokenize-only needs a model with a tokenizer, not hash")
        feed_rate.run(args.count, args.model, args.batch_size, args.tokenize_workers)
        return
    logging.basicConfig(format="  %(message)s")  # the pipeline's split: tokenizing / model
    logging.getLogger("router.encoders.pipeline").setLevel(logging.INFO)
    from router.encoders.device import placement_for
    from router.errors import InvalidRequest

    try:
        placement = placement_for(args.device, args.precision, model=args.model)
    except InvalidRequest as exc:  # e.g. --device cuda where torch sees no CUDA device
        raise SystemExit(f"error: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="gpu-build-") as tmp:
        catalog = args.catalog or Path(tmp) / "catalog"
        if args.catalog is None:
            started = time.perf_counter()
            write(catalog, args.count)
            print(f"wrote {args.count} skill folders in {time.perf_counter() - started:.1f} s")
        print(f"model {args.model} on {placement.device} ({placement.precision}), "
              f"batch {args.batch_size}, build workers {args.build_workers or 'all CPUs'}, "
              f"tokenize workers {args.tokenize_workers or 'by device'}")
        texts, vectors = _stages(catalog, Path(tmp) / "version", args, placement)
        if args.compare_cpu:
            rows = spread(len(texts), args.compare_cpu)
            _compare([texts[i] for i in rows], vectors[rows], args.model)
        if args.whole:
            _whole(catalog, Path(tmp) / "index", args)


def _stages(catalog: Path, folder: Path, args: argparse.Namespace,
            placement: Any) -> tuple[list[str], np.ndarray]:
    from router.common.workers import Workers
    from router.encoders.factory import make_embedder
    from router.examples.sources import gather
    from router.index import dense
    from router.index.lexical import LexicalIndex, skill_document
    from router.index.vectors import embed_skills, embedding_text
    from router.skills.sources.base import create_source

    times: dict[str, float] = {}
    config = DiscoveryConfig(org_roots=(str(catalog),), catalog_max_dirs=0)
    embedder = make_embedder(args.model, batch_size=args.batch_size, placement=placement,
                             progress=sys.stderr.isatty(),
                             tokenize_workers=args.tokenize_workers)
    _timed("load", times, lambda: embedder.encode(["warm up"]))
    source = create_source()  # the skill folders on disk, as a build reads them
    with Workers(args.build_workers) as pool:
        found = _timed("discovery", times, lambda: source.discover(config, workers=pool))
        if not args.embedding_only:
            _timed("digests", times, lambda: source.digest_all(found.skills, None, pool))
            _timed("examples", times, lambda: gather(found.skills, [], (), pool))
        skills = sorted(found.skills, key=lambda s: s.name)
        vectors, _ = _timed("embedding", times,
                            lambda: embed_skills(skills, embedder, {}, False))
        if not args.embedding_only:
            documents = [skill_document(s.name, s.description) for s in skills]
            lexical = _timed("bm25", times, lambda: LexicalIndex.build(documents, pool))
    if not args.embedding_only:
        index = _timed("faiss", times, lambda: dense.build(vectors))
        _timed("write", times, lambda: _write(folder, skills, vectors, index, lexical))
    total = sum(v for k, v in times.items() if k != "load")
    rate = len(skills) / times["embedding"] if times["embedding"] > 0 else float("inf")
    print(f"{len(skills)} skills: embedding {rate:,.0f} texts/s "
          f"({times['embedding']:.1f} s on {placement.device} {placement.precision}); "
          f"stages {total:.1f} s "
          f"(1M at this rate, linear: {total * 1_000_000 / max(1, len(skills)) / 60:.1f} min)")
    return [embedding_text(s) for s in skills], vectors


def _write(folder: Path, skills: list[Any], vectors: np.ndarray, index: Any,
           lexical: Any) -> None:
    """What a build writes for a version (``router.index.version_files``), and its checksums."""
    from router.index.version_files import write_files
    from router.index.versions.layout import checksums

    folder.mkdir(parents=True)
    write_files(folder, skills, [], vectors, lexical, index)
    checksums(folder)


def spread(total: int, count: int) -> np.ndarray:
    """``count`` row numbers spread evenly over ``total`` rows (all of them when fewer)."""
    if count >= total:
        return np.arange(total)
    return np.unique(np.linspace(0, total - 1, max(1, count)).round().astype(np.int64))


def top_overlap(queries: np.ndarray, ours: np.ndarray, reference: np.ndarray,
                k: int = 5) -> tuple[float, float]:
    """Mean share of each query's top ``k`` by ``reference`` that ``ours`` also puts in its top
    ``k``, and the share of queries whose top ``k`` is the same set."""
    if not len(queries) or not len(ours):
        return 1.0, 1.0
    k = min(k, len(ours))
    mine = np.argsort(-(queries @ ours.T), axis=1, kind="stable")[:, :k]
    theirs = np.argsort(-(queries @ reference.T), axis=1, kind="stable")[:, :k]
    shared = np.array([len(set(a) & set(b)) for a, b in zip(mine, theirs, strict=True)])
    return float(shared.mean() / k), float(np.mean(shared == k))


def _compare(texts: list[str], vectors: np.ndarray, model: str) -> None:
    from benchmarks.catalog import requests
    from router.encoders.factory import make_embedder

    cpu = make_embedder(model)  # plain sentence-transformers, CPU fp32
    reference = cpu.encode(texts)
    cosines = np.sum(reference * vectors, axis=1)
    worst = float(cosines.min()) if len(cosines) else 1.0
    verdict = "within" if worst >= TOLERANCE else "OUTSIDE"
    print(f"against CPU fp32 on {len(texts)} texts: min cosine {worst:.6f}, "
          f"max |diff| {float(np.abs(reference - vectors).max()):.2e} ({verdict} {TOLERANCE})")
    mean, same = top_overlap(cpu.encode(requests(TOP_REQUESTS)), vectors, reference)
    print(f"top 5 of {TOP_REQUESTS} requests among those {len(texts)} skills: {mean:.4f} "
          f"shared on average, the same 5 for {same:.1%} of requests")


def _whole(catalog: Path, out: Path, args: argparse.Namespace) -> None:
    argv = [sys.executable, "-m", "router.cli", "index", "--no-project", "--no-home", "--root",
            str(catalog), "--out", str(out), "--model", args.model, "--device", args.device,
            "--precision", args.precision, "--fine-tune-encoder", "off"]
    env = {**os.environ, "SKILL_ROUTER_DISCOVERY_CATALOG_MAX_DIRS": "0",
           "SKILL_ROUTER_INDEX_BATCH_SIZE": str(args.batch_size),
           "SKILL_ROUTER_INDEX_BUILD_WORKERS": str(args.build_workers)}
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    print(f"whole `skill-router index` (folders to CURRENT): "
          f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
