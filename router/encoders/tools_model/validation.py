"""How well an encoder finds the tools of the held-back requests: every validation request
ranks the pool of validation tools (none seen in training); recall@k is the share of a request's
needed tools in its top k (of at most k), averaged over requests, with MRR of the first right
tool. ``compare`` gives a paired bootstrap interval of the difference between two encoders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from router.encoders.base import Embedder
from router.encoders.tools_model.rows import Row

KS = (1, 5, 10)


@dataclass(frozen=True)
class Figures:
    requests: int
    tools: int
    recall: dict[int, float]
    mrr: float
    per_request: tuple[float, ...]  # recall@5 of each request (for paired comparisons)

    def to_dict(self) -> dict[str, object]:
        return {"requests": self.requests, "tools": self.tools, "mrr": round(self.mrr, 4),
                **{f"recall@{k}": round(v, 4) for k, v in self.recall.items()}}


def embedded(rows: Sequence[Row], encoder: Embedder) -> dict[str, np.ndarray]:
    """``encoder``'s vector of every request and needed tool document of ``rows``, each text
    encoded once (``measure`` any subset of ``rows`` from them)."""
    texts = sorted({r.request for r in rows} | {t.document for r in rows for t in r.tools})
    return dict(zip(texts, encoder.encode(texts), strict=True)) if texts else {}


def measure(rows: Sequence[Row], vectors: Mapping[str, np.ndarray]) -> Figures:
    """The figures of the encoder that made ``vectors`` (``embedded``) on ``rows`` (the
    validation split, or a part of it) against their tools."""
    pool = sorted({t.document for r in rows for t in r.tools})
    if not rows or not pool:
        return Figures(0, 0, dict.fromkeys(KS, 0.0), 0.0, ())
    position = {d: i for i, d in enumerate(pool)}
    scores = np.stack([vectors[r.request] for r in rows]) @ np.stack([vectors[d]
                                                                      for d in pool]).T
    return figures(scores, [{position[t.document] for t in r.tools} for r in rows])


def figures(scores: np.ndarray, needed: Sequence[set[int]]) -> Figures:
    """Recall@k and MRR from a (requests x tools) score matrix and each request's right tools
    (ties broken by the lower tool position)."""
    order = np.lexsort((np.arange(scores.shape[1])[None, :].repeat(len(scores), 0), -scores))
    recall = {k: 0.0 for k in KS}
    mrr, at5 = 0.0, []
    for ranked, right in zip(order, needed, strict=True):
        ranks = [int(p) for p in np.flatnonzero(np.isin(ranked, list(right)))]
        for k in KS:
            recall[k] += sum(1 for r in ranks if r < k) / min(len(right), k)
        at5.append(sum(1 for r in ranks if r < 5) / min(len(right), 5))
        mrr += 1.0 / (ranks[0] + 1) if ranks else 0.0
    n = len(needed)
    return Figures(n, scores.shape[1], {k: v / n for k, v in recall.items()}, mrr / n,
                   tuple(at5))


def compare(base: Figures, tuned: Figures, *, draws: int = 2000,
            seed: int = 0) -> tuple[float, float, float]:
    """Mean difference of recall@5 (tuned - base) over the same requests and its paired
    bootstrap 95% interval."""
    diffs = np.asarray(tuned.per_request) - np.asarray(base.per_request)
    if not len(diffs):
        return 0.0, 0.0, 0.0
    picks = np.random.default_rng(seed).integers(0, len(diffs), size=(draws, len(diffs)))
    low, high = np.quantile(diffs[picks].mean(axis=1), [0.025, 0.975])
    return float(diffs.mean()), float(low), float(high)
