"""fuse_views works on arrays; it must rank exactly as the candidate-by-candidate rule."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from router.calibration.fusion_terms import DenseScale, lexical_scale
from router.routing.fusion import Fused, FusionConfig, Hits, fuse_views


def _reference(dense: Sequence[Hits], lexical: Sequence[Hits], config: FusionConfig,
               baseline: float) -> list[Fused]:
    """The rule written one candidate at a time: per id the view with the highest
    normalised score (the earliest on ties), the floor for ids no dense view returned."""
    def keep(best: dict[int, tuple[float, float]], view: Hits, raw: np.ndarray,
             norm: np.ndarray) -> None:
        for i, r, n in zip(view.ids.tolist(), raw.tolist(), norm.tolist(), strict=True):
            if i not in best or n > best[i][1]:
                best[i] = (r, n)

    d_best: dict[int, tuple[float, float]] = {}
    d_floor = (0.0, 0.0)
    scale = DenseScale.of(dense, baseline)
    if scale is not None:
        d_floor = (scale.floor, scale.floor_score)
        for view in dense:
            if len(view.ids):
                raw = np.asarray(view.scores, dtype=np.float64)
                keep(d_best, view, raw, scale(raw) * view.weight)
    l_best: dict[int, tuple[float, float]] = {}
    for view in lexical:
        raw = np.asarray(view.scores, dtype=np.float64)
        scaled = lexical_scale(raw)
        if scaled is not None:
            keep(l_best, view, raw, scaled * view.weight)
    w = config.dense_weight
    out = []
    for i in d_best.keys() | l_best.keys():
        d_raw, d_norm = d_best.get(i, d_floor)
        l_raw, l_norm = l_best.get(i, (0.0, 0.0))
        out.append(Fused(int(i), d_raw, l_raw, w * d_norm + (1.0 - w) * l_norm))
    out.sort(key=lambda f: (-f.fused, f.index))
    return out


def _views(rng: np.random.Generator, n_views: int, rows: int, depth: int, lexical: bool,
           ) -> list[Hits]:
    out = []
    for v in range(n_views):
        size = int(rng.integers(0, min(depth, rows) + 1))
        ids = rng.choice(rows, size=size, replace=False).astype(np.int64)
        if lexical:  # BM25: coarse scores, many ties, some views matching nothing
            scores = rng.integers(0, 4, size=size).astype(np.float32) * 1.5
            keep = scores > 0
            ids, scores = ids[keep], scores[keep]
        else:  # cosines on a coarse grid, so views tie with each other
            scores = (rng.integers(-2, 20, size=size) / 20.0).astype(np.float32)
        order = np.lexsort((ids, -scores))
        out.append(Hits(ids[order], scores[order], 1.0 if v == 0 else 0.4 * (v % 3 + 1)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_fuse_views_ranks_as_the_candidate_by_candidate_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 120))
    n_views = int(rng.integers(0, 5))
    dense = _views(rng, n_views, rows, 50, lexical=False)
    lexical = _views(rng, n_views + int(rng.integers(0, 2)), rows, 50, lexical=True)
    config = FusionConfig(dense_weight=float(rng.choice([0.0, 0.3, 0.5, 1.0])))
    baseline = float(rng.choice([0.0, 0.2, 0.99]))  # 0.99: no cosine above it, every score 1
    got = fuse_views(dense, lexical, config, dense_baseline=baseline)
    want = _reference(dense, lexical, config, baseline)
    assert got == want  # the same candidates, scores bit for bit, and order
    assert all(type(f.index) is int and type(f.fused) is float for f in got)


def test_no_view_returned_anything() -> None:
    empty = Hits(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    assert fuse_views([empty], [empty], FusionConfig()) == []
    assert fuse_views([], [], FusionConfig()) == []
