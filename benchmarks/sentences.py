"""Route latency of the dev set's one-sentence and multi-sentence requests (``make bench``).

A turn is encoded in one encoder call: a one-sentence message is one text, a message of
several sentences is its sentences (its whole-message vector is pooled from them), and the
int8 copy runs each text alone. The dev set's requests (``DEV_QUERIES``, where the Makefile's
``DEV_SET`` puts it; skipped when it is absent) are routed in-process against the benchmark's
index, each with the bare encode of the same message beside it, the two groups in turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks import measure as bench_measure
from router.calibration.fusion_terms import FusionConfig
from router.engine import Engine
from router.routing.fusion import query_views
from router.routing.model import RouteQuery

DEV_QUERIES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sealtools" \
    / "queries.jsonl"
GROUPS = ("one_sentence", "multi_sentence")


def dev_requests(path: Path = DEV_QUERIES) -> dict[str, list[str]]:
    """The dev set's distinct requests by group, in file order ({} when it is absent)."""
    if not path.is_file():
        return {}
    groups: dict[str, list[str]] = {name: [] for name in GROUPS}
    seen: set[str] = set()
    fusion = FusionConfig()
    for line in path.read_text(encoding="utf-8").splitlines():
        text = str(json.loads(line)["query"]) if line.strip() else ""
        if not text or text in seen:
            continue
        seen.add(text)
        groups[GROUPS[len(query_views(text, fusion)) > 1]].append(text)
    return groups


def sentence_figures(engine: Engine, requests: int,
                     path: Path = DEV_QUERIES) -> dict[str, Any]:
    """Per group: in-process Route and bare encode p50 / p99 over up to ``requests`` requests,
    and the mean number of texts a turn encodes ({} without the dev set)."""
    groups = dev_requests(path)
    count = min([requests, *(len(texts) for texts in groups.values())]) if groups else 0
    if count < 4:
        return {}
    fusion = FusionConfig()

    def route(text: str) -> object:
        return engine.route(RouteQuery(message=text))

    def bare(text: str) -> object:
        return engine.embedder.encode([text])

    calls: dict[str, Callable[[str], object]] = {f"{g}_route": route for g in GROUPS}
    calls.update({f"{g}_bare_encode": bare for g in GROUPS})
    inputs = [groups[g][i] for i in range(count) for g in GROUPS]  # the groups in turn
    timed = bench_measure.interleaved(calls, inputs,
                                      same={f"{g}_bare_encode": f"{g}_route" for g in GROUPS})
    out: dict[str, Any] = {"source": str(path), "requests": count}
    for g in GROUPS:
        views = [len(query_views(t, fusion)) for t in groups[g][:count]]
        texts = [1 if v == 1 else v - 1 for v in views]  # the sentences, not the pooled whole
        out[g] = {"route": timed[f"{g}_route"], "bare_encode": timed[f"{g}_bare_encode"],
                  "texts_per_turn": round(sum(texts) / len(texts), 2),
                  "of_dev_set": len(groups[g])}
    return out


def sentence_rows(size: str, f: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Printed lines: each group's Route p50 beside its bare encode p50."""
    s = f.get("sentences") or {}
    for g in GROUPS:
        if g not in s:
            continue
        r, b = s[g]["route"], s[g]["bare_encode"]
        yield (f"{size:>7} dev {g.replace('_', '-')} Route",
               f"p50 {r['p50_ms']:.2f} ms (bare encode {b['p50_ms']:.2f} ms, "
               f"x{r['p50_ms'] / max(b['p50_ms'], 1e-9):.2f}; "
               f"{s[g]['texts_per_turn']:.1f} texts a turn)")
