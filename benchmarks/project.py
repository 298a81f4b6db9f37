"""Route latency with a project's own skills sent with the turn (``project_skills``): 0, 50 and
200 of them, on the first turn (none embedded yet: fresh skills on every call) and cached (the
same skills on every call, as the next turns of a conversation send them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchmarks import catalog as bench_catalog
from benchmarks import measure as bench_measure
from router.engine import Engine
from router.routing.model import InlineSkill, RouteQuery

COUNTS = (50, 200)
SEED = 101  # another seed than the catalog's, so the project skills are other skills


def _inline(count: int) -> list[InlineSkill]:
    return [InlineSkill(s.name, s.description, f"/repo/.agents/skills/{s.name}/SKILL.md")
            for s in bench_catalog.catalog(count, SEED)]


def project_figures(engine: Engine, texts: Sequence[str]) -> dict[str, Any]:
    """p50/p99 per case, taken in turn (``bench_measure.interleaved``), and each case's p50
    over the p50 without project skills. The skills are drawn before any is timed."""
    cases = 1 + 2 * len(COUNTS)
    turns = len(texts) // cases + 1
    pool = _inline(max(COUNTS) + turns * sum(COUNTS))
    fixed = {n: tuple(pool[:n]) for n in COUNTS}
    fresh = iter(pool[max(COUNTS):])

    def call(make: Callable[[], tuple[InlineSkill, ...]]) -> Callable[[str], object]:
        def route(text: str) -> object:
            return engine.route(RouteQuery(message=text, top_k=5, project_skills=make()))
        return route

    def same(n: int) -> Callable[[], tuple[InlineSkill, ...]]:
        return lambda: fixed[n]

    def new(n: int) -> Callable[[], tuple[InlineSkill, ...]]:
        return lambda: tuple(next(fresh) for _ in range(n))

    calls: dict[str, Callable[[str], object]] = {"route_project_0": call(tuple)}
    for n in COUNTS:
        calls[f"route_project_{n}_cached"] = call(same(n))
        calls[f"route_project_{n}_first"] = call(new(n))
    out: dict[str, Any] = bench_measure.interleaved(calls, texts)
    base = max(out["route_project_0"]["p50_ms"], 1e-9)
    for name in calls:
        out[name]["p50_vs_none"] = round(out[name]["p50_ms"] / base, 3)
    return out


def project_rows(size: str, figures: dict[str, Any]) -> list[tuple[str, str]]:
    found = figures.get("project")
    if not found:
        return []
    return [(f"{size:>7} {name}", f"p50 {f['p50_ms']:.2f} ms  p99 {f['p99_ms']:.2f} ms  "
             f"x{f['p50_vs_none']:.2f}") for name, f in found.items()]
