"""The relevance gate of a caller's view, calibrated on the catalogs it draws on (pure, numpy).

A build calibrates one gate on the whole index (``router.calibration.gate_fit``). For an index
of several catalogs it also records each calibration request's evidence against every catalog
alone (:class:`CatalogEvidence`): its best cosine (with the example evidence the index scores
with), its best cosine over the descriptions alone, its best BM25 score and its closest
positive example. The gate of a view that draws on some of the catalogs is then calibrated on
the row-wise best over those catalogs, exactly as the whole index's gate is on all of them: a
skill added to one catalog moves the gate of the views that hold that catalog, and no other.

What the build fitted on the whole index's held-out examples (the stricter quantile and margin
of ``router.calibration.gate.fit_to_catalog``) and the fixed floor's scale are kept; the
quantiles themselves come from the view's catalogs. BM25 scores are the index's (its term
statistics), as a turn's are: the lexical threshold moves with them as a turn's scores do.
A view that holds every catalog has the whole index's gate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from router.calibration import gate
from router.examples.scoring import BOTH, CLOSEST, VIEW, ExampleIndex, ExampleMode

BLOCK = 8192  # skill rows scored against the calibration requests at once
KEPT = 256  # views' gates kept per index version (cleared when full)
NONE = -1.0  # a catalog's evidence where it has nothing to offer (no skill, no example)


@dataclass(frozen=True)
class CatalogEvidence:
    """Per calibration request (rows) and catalog (columns, ``catalogs``): what the gate is
    calibrated on. ``plain`` and ``reach`` are those of the zero-shot gate (with examples)."""

    catalogs: tuple[str, ...]
    best: np.ndarray  # best cosine, descriptions and the example evidence scored with
    lexical: np.ndarray | None  # best BM25 score (None: the index searched no BM25)
    plain: np.ndarray  # best cosine over the descriptions alone
    reach: np.ndarray  # cosine of the closest positive example (NONE: the catalog has none)

    def stacked(self) -> np.ndarray:
        """The four matrices as one float32 array (4, requests, catalogs); a missing BM25
        matrix is stored as NaN."""
        words = self.lexical if self.lexical is not None else np.full_like(self.best, np.nan)
        return np.stack([self.best, words, self.plain, self.reach]).astype(np.float32)

    @classmethod
    def unstacked(cls, catalogs: Sequence[str], data: np.ndarray) -> CatalogEvidence:
        if data.ndim != 3 or data.shape[0] != 4 or data.shape[2] != len(catalogs):
            raise ValueError(f"catalog gate evidence has shape {data.shape}, expected "
                             f"(4, requests, {len(catalogs)})")
        words = None if np.isnan(data[1]).all() else data[1]
        return cls(tuple(catalogs), data[0], words, data[2], data[3])


def _grouped_max(queries: np.ndarray, rows: np.ndarray, group: np.ndarray,
                 groups: int) -> np.ndarray:
    """Per query and group, the best cosine to ``rows`` of that group (``group[i]``: row i's)."""
    out = np.full((len(queries), groups), NONE, dtype=np.float32)
    for start in range(0, len(rows), BLOCK):
        sims = queries @ np.asarray(rows[start:start + BLOCK], dtype=np.float32).T
        part = group[start:start + BLOCK]
        for g in np.unique(part).tolist():
            np.maximum(out[:, g], sims[:, part == g].max(axis=1), out=out[:, g])
    return out


def evidence(queries: np.ndarray, skills: np.ndarray, catalog_of: np.ndarray,
             catalogs: Sequence[str], index: ExampleIndex | None, mode: ExampleMode,
             best_words: Callable[[np.ndarray, int], np.ndarray] | None) -> CatalogEvidence:
    """The evidence of calibration requests ``queries`` (the serving encoder's vectors) against
    each catalog: skill row i is in catalog ``catalog_of[i]`` (a column of ``catalogs``);
    ``best_words(group, groups)``: each request's best BM25 score per group (None: no BM25)."""
    queries = np.asarray(queries, dtype=np.float32)
    groups = len(catalogs)
    plain = _grouped_max(queries, skills, catalog_of, groups)
    best, reach = plain.copy(), np.full_like(plain, NONE)
    if index is not None:
        positive = ~index.negative
        if mode in (VIEW, BOTH) and len(index.views):
            best = np.maximum(best, _grouped_max(queries, index.views,
                                                 catalog_of[index.view_skill], groups))
        if positive.any():
            reach = _grouped_max(queries, index.vectors[positive],
                                 catalog_of[index.skill[positive]], groups)
            if mode in (CLOSEST, BOTH):
                best = np.maximum(best, reach)
    words = None if best_words is None else best_words(catalog_of, groups)
    return CatalogEvidence(tuple(catalogs), best, words, plain, reach)


@dataclass(frozen=True)
class ViewGate:
    """The gate a turn of a view is judged by: the calibration, the calibration requests its
    nearest-request test compares with, and the zero-shot gate (each None where none)."""

    calibration: gate.Calibration | None
    off_topic: np.ndarray | None
    zero_shot: gate.ZeroShotGate | None


def _view_calibration(whole: gate.Calibration, best: np.ndarray,
                      words: np.ndarray | None) -> gate.Calibration:
    """``whole``'s quantiles taken on ``best`` and ``words``, with what it fitted kept."""
    made = gate.calibrate(best, whole.catalog_requests, whole.quantile, words)
    assert made is not None  # best has a row per calibration request, as whole's had
    return replace(made, margin=whole.margin, dense_quantile=whole.dense_quantile,
                   dense_low=round(float(np.quantile(best.astype(np.float64),
                                                     whole.dense_quantile)), 6),
                   floor_scale=whole.floor_scale)


def _under(null: np.ndarray, best: np.ndarray, calibration: gate.Calibration) -> np.ndarray:
    return np.ascontiguousarray(null[best < calibration.min_dense], dtype=np.float32)


def view_gate(whole: ViewGate, null: np.ndarray, found: CatalogEvidence,
              columns: Sequence[int]) -> ViewGate:
    """The gate of a view drawing on catalogs ``columns`` of ``found``; ``whole``: the whole
    index's, ``null``: every calibration request's vector (as turns are compared with them)."""
    if whole.calibration is None or not columns:
        return whole
    cols = list(columns)
    words = found.lexical[:, cols].max(axis=1) if found.lexical is not None else None
    best = found.best[:, cols].max(axis=1)
    calibration = _view_calibration(whole.calibration, best, words)
    zero = whole.zero_shot
    if zero is not None:
        plain = found.plain[:, cols].max(axis=1)
        made = gate.calibrate(plain, zero.calibration.catalog_requests, lexical=words)
        reach = found.reach[:, cols]
        taught = float(reach.max()) if bool((reach > NONE).any()) else 2.0  # 2: none taught
        if made is not None:
            zero = gate.ZeroShotGate(made, _under(null, plain, made), taught)
    return ViewGate(calibration, _under(null, best, calibration), zero)


class CatalogGates:
    """The gates of an index version's views, made once per set of catalogs and kept."""

    def __init__(self, whole: ViewGate, null: np.ndarray, found: CatalogEvidence) -> None:
        self.whole, self._null, self._found = whole, null, found
        self._column = {name: i for i, name in enumerate(found.catalogs)}
        self._kept: dict[frozenset[str], ViewGate] = {}
        self._lock = threading.Lock()

    def of(self, catalogs: Sequence[str]) -> ViewGate:
        """The gate of a view drawing on ``catalogs`` (the whole index's when that is all)."""
        columns = sorted({self._column[c] for c in catalogs if c in self._column})
        if len(columns) == len(self._column):
            return self.whole
        key = frozenset(self._found.catalogs[i] for i in columns)
        with self._lock:
            found = self._kept.get(key)
        if found is None:
            found = view_gate(self.whole, self._null, self._found, columns)
            with self._lock:
                if len(self._kept) >= KEPT:
                    self._kept.clear()
                self._kept[key] = found
        return found
