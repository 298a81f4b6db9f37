"""Route over real skills: one-line requests against long multi-step tasks, in one run.

    python -m benchmarks.long_requests [--root index_data/realskills/skills]
        [--queries eval/realskills/queries.jsonl] [--cache index_data/eval] [--json]

Builds (or reuses, in ``--cache``) the index of the real-skill catalog (``make realskills``
unpacks it; ``eval/realskills/README.md``) with the configuration's defaults, then routes in
process, kind after kind request by request so load from other processes falls on every kind
alike: the set's one-line requests, its long tasks (about 1,000-1,650 characters) and
2,000-character tasks (two other long tasks joined, cut at a word). Each kind is routed by an
engine of its own and each text once, so no Route finds its views in the query cache. Per kind:
Route p50 / p99, its ratio to the one-line p50 of the same run, and the serving encoder alone on
the texts such a Route embeds (its views), so the encoder's share of a long request shows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.measure import summary
from router.config import load_config
from router.engine import Engine
from router.evaluation.runner import index_for_root
from router.routing.fusion import FusionConfig
from router.routing.model import RouteQuery
from router.routing.query_text import turn_texts

LONG_CHARS = 2000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("index_data/realskills/skills"))
    parser.add_argument("--queries", type=Path, default=Path("eval/realskills/queries.jsonl"))
    parser.add_argument("--cache", type=Path, default=Path("index_data/eval"))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser


def joined(texts: Sequence[str], size: int = LONG_CHARS) -> list[str]:
    """The texts two by two (the first and second, the third and fourth, ...), each pair cut
    back to a word within ``size``: no text is in two of them."""
    out = []
    for first, second in zip(texts[::2], texts[1::2], strict=False):
        both = f"{first} {second}"
        out.append(both[:size].rsplit(" ", 1)[0] if len(both) > size else both)
    return out


def kinds(rows: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """The request texts of each kind the benchmark routes."""
    short = [str(r["query"]) for r in rows if "short" in r.get("tags", ())]
    long = [str(r["query"]) for r in rows if "long" in r.get("tags", ())]
    if not short or len(long) < 2:
        raise SystemExit("the queries file needs requests tagged short and long")
    return {"one-line": short, "long task": long, f"{LONG_CHARS:,}-character task": joined(long)}


def measure(calls: dict[str, Callable[[str], object]],
            texts: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Each call timed once on each of its texts, the calls taken in turn."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(max(len(t) for t in texts.values())):
        for name, call in calls.items():
            if i < len(texts[name]):
                started = time.perf_counter()
                call(texts[name][i])
                times[name].append(time.perf_counter() - started)
    return {name: summary(seconds) for name, seconds in times.items()}


def figures(engines: dict[str, Engine], texts: dict[str, list[str]]) -> dict[str, Any]:
    """Route (each kind on its engine) and the bare encode of its views, per kind, with
    ratios to one-line Route."""
    fusion = FusionConfig()

    def route(engine: Engine) -> Callable[[str], object]:
        return lambda text: engine.route(RouteQuery(message=text))

    def encode(engine: Engine) -> Callable[[str], object]:
        return lambda text: engine.embedder.encode(list(turn_texts(text, (), fusion).texts))

    routed = measure({name: route(engines[name]) for name in texts}, texts)
    encoded = measure({name: encode(engines[name]) for name in texts}, texts)
    base = routed["one-line"]["p50_ms"] or 1.0
    return {name: {"chars_median": sorted(map(len, texts[name]))[len(texts[name]) // 2],
                   "route": routed[name], "encode": encoded[name],
                   "route_vs_one_line": round(routed[name]["p50_ms"] / base, 2)}
            for name in texts}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.root.is_dir():
        print(f"{args.root} not found: `make realskills` unpacks the real-skill catalog",
              file=sys.stderr)
        return 1
    rows = [json.loads(line) for line in args.queries.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    config = load_config()
    index = index_for_root(args.root, config, args.cache)
    texts = kinds(rows)
    engines = {name: Engine.open(index, config) for name in texts}
    for engine in engines.values():  # warm-up, untimed
        engine.route(RouteQuery(message="warm up the encoder and the index"))
    found = figures(engines, texts)
    skills = len(engines["one-line"].snapshot.skills)
    if args.json:
        print(json.dumps({"skills": skills, "kinds": found}, indent=2))
        return 0
    print(f"Route in process over {skills:,} real skills (p50 / p99 ms; "
          "encode: the serving encoder alone on the Route's views)")
    for name, f in found.items():
        print(f"  {name:<24} {f['chars_median']:>6} chars  route {f['route']['p50_ms']:7.2f} / "
              f"{f['route']['p99_ms']:7.2f}  ({f['route_vs_one_line']:.1f}x one-line)  "
              f"encode {f['encode']['p50_ms']:7.2f} / {f['encode']['p99_ms']:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
