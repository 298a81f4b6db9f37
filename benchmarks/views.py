"""Route latency for callers with a view (``router.access.view``) of one large index.

The benchmark index deals its skills round robin into ``VIEW_CATALOGS`` named catalogs of 1%
each, so an unrestricted caller (every catalog, names unique) routes exactly as over a single
catalog, while a caller holding one catalog sees 1% of the skills and one holding half of them
50%; retrieval searches within the view, so each still gets its ``top_k``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from benchmarks import measure as bench_measure
from router.access.model import ANONYMOUS, Principal
from router.engine import Engine
from router.routing.model import RouteQuery
from router.skills.model import Skill

VIEW_CATALOGS = 100
TOP_K = 5


def catalog_names() -> tuple[str, ...]:
    return tuple(f"c{i:02d}" for i in range(VIEW_CATALOGS))


def with_catalogs(skills: Sequence[Skill]) -> list[Skill]:
    """``skills`` dealt round robin into ``catalog_names()``."""
    names = catalog_names()
    return [replace(s, catalog=names[i % VIEW_CATALOGS]) for i, s in enumerate(skills)]


CALLERS = {
    "route_unrestricted": ANONYMOUS,
    "route_view_1pct": Principal("one-catalog", catalogs=catalog_names()[:1]),
    "route_view_50pct": Principal("half", catalogs=catalog_names()[:VIEW_CATALOGS // 2]),
}


def view_figures(engine: Engine, texts: Sequence[str]) -> dict[str, Any]:
    """p50/p99 per caller, taken in turn (``bench_measure.interleaved``), how many skills each
    got back on average, and each view's p50 over the unrestricted caller's."""
    shown: dict[str, list[int]] = {name: [] for name in CALLERS}

    def call(name: str, caller: Principal) -> Callable[[str], object]:
        def route(text: str) -> object:
            result = engine.route(RouteQuery(message=text, top_k=TOP_K, caller=caller))
            shown[name].append(len(result.skills))
            return result
        return route

    out: dict[str, Any] = bench_measure.interleaved(
        {name: call(name, caller) for name, caller in CALLERS.items()}, texts)
    base = max(out["route_unrestricted"]["p50_ms"], 1e-9)
    for name in CALLERS:
        out[name]["mean_shown"] = round(sum(shown[name]) / max(len(shown[name]), 1), 2)
        out[name]["p50_vs_unrestricted"] = round(out[name]["p50_ms"] / base, 3)
    return out


def view_rows(size: str, figures: dict[str, Any]) -> list[tuple[str, str]]:
    views = figures.get("views")
    if not views:
        return []
    return [(f"{size:>7} {name}", f"p50 {views[name]['p50_ms']:.2f} ms  p99 "
             f"{views[name]['p99_ms']:.2f} ms  x{views[name]['p50_vs_unrestricted']:.2f}  "
             f"shown {views[name]['mean_shown']:.1f}") for name in CALLERS]


def main() -> None:
    """``python -m benchmarks.views [--sizes 10000,100000] [--embed-limit N] [--project N]``:
    these figures (and ``benchmarks.project``'s) alone, on indexes built here (the full
    ``make bench`` includes them)."""
    import argparse
    import json
    import shutil
    import tempfile
    from pathlib import Path

    from benchmarks import catalog as bench_catalog
    from benchmarks.encoders import CachedEmbedder, skill_vectors
    from benchmarks.options import BenchOptions
    from benchmarks.project import COUNTS, project_figures, project_rows
    from router.builder.inputs import Carried
    from router.builder.version import build_index
    from router.config import Config
    from router.index import dense
    from router.index.query_encoder import prepare_query_embedder, query_embedder

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--embed-limit", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=200, help="per caller")
    parser.add_argument("--out", default="bench_results")
    parser.add_argument("--project", type=int, default=0, metavar="N",
                        help="also Route with project skills, N calls per case")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    options = BenchOptions(out_dir=Path(args.out), embed_limit=args.embed_limit)
    dense.set_threads(1)
    work = Path(tempfile.mkdtemp(prefix="skill-router-views-"))
    results: dict[str, Any] = {}
    try:
        prepare_query_embedder(options.model, work / "onnx")
        vectors, made = skill_vectors(options, max(sizes), work / "onnx" / ".onnx")
        fallback = query_embedder(options.model, work / "onnx")
        texts = bench_catalog.requests((len(CALLERS) * args.requests + 6 * args.project)
                                       * len(sizes) + 100)
        for n, size in enumerate(sizes):
            skills = with_catalogs(bench_catalog.catalog(size, options.seed))
            root = work / f"index-{size}"
            build_index(skills, [], CachedEmbedder(options.model, skills, vectors[:size],
                                                   fallback), root,
                        carried=Carried(catalogs=catalog_names()))
            shutil.copytree(work / "onnx" / ".onnx", root / ".onnx")
            engine = Engine.open(root, Config())
            step = len(CALLERS) * args.requests
            mine = texts[n * step:(n + 1) * step]
            results[str(size)] = {"views": view_figures(engine, mine),
                                  "dense_index": dense.kind_of(engine.snapshot.dense)}
            if args.project:  # requests of their own: none of them has been encoded yet
                start = len(sizes) * step + n * 6 * args.project
                results[str(size)]["project"] = project_figures(
                    engine, texts[start:start + (1 + 2 * len(COUNTS)) * args.project])
            engine.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for label_size, figures in results.items():
        for label, value in [*view_rows(label_size, figures),
                             *project_rows(label_size, figures)]:
            print(f"{label:<34} {value}")
    print(json.dumps({"vectors": made, "sizes": results}, indent=1))


if __name__ == "__main__":
    main()
