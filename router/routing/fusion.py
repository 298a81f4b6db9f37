"""Hybrid fusion of dense (embedding) and lexical (BM25) candidates, and the relevance gate.

Pure, numpy only. A turn is searched as *views* (:func:`query_views`): the whole message (its
vector may be :func:`pool` of the sentence vectors, mixed with history by :func:`mix_history`)
and, if it has two or more sentences, each sentence; one vector of a multi-request message
("do X. Then do Y.") matches each request poorly. Per view each retriever gives :class:`Hits`;
:func:`fuse_views` ranks the union by ``w * dense + (1 - w) * lexical``, ``w = dense_weight``:

* dense: best cosine over views as ``(cos - b) / (top - b)`` in [0, 1]; ``top`` is the turn's
  best cosine, ``b`` the message's cosine to the catalog centroid (``dense_baseline``). Free of
  a model's cosine offset and scale, so ``w`` keeps its meaning for any embedding model.
* lexical: BM25 over the view's best BM25, times the view weight; best over views.

Defaults are fitted on the train part of the Seal-Tools dev set (4,076 skills, 1,354 requests;
train when the first 8 bytes of sha256(id), big-endian, mod 100 < 60: 800 train, 554 held out)
with all-MiniLM-L6-v2 and ``router.index.lexical``. Recall@5 / MRR@10, train and held-out:

=================================================  =============  =============
BM25, whole message                                0.783 / 0.915  0.766 / 0.916
MiniLM cosine, whole message                       0.587 / 0.815  0.548 / 0.822
reciprocal-rank fusion k=60, whole message         0.721 / 0.925  0.702 / 0.900
min-max convex, w=0.2 (best on train), whole msg   0.804 / 0.935  0.787 / 0.928
BM25, sentence views                               0.879 / 0.849  0.874 / 0.864
MiniLM cosine, sentence views                      0.777 / 0.904  0.760 / 0.898
defaults: sentence views, w=0.5                    0.910 / 0.952  0.906 / 0.956
=================================================  =============  =============

``dense_weight`` 0.5 minimises the worst recall@5 loss against the better single retriever over
two stress tests of similar severity (train): dense weakened (no sentence views) -0.019, BM25
weakened (60% of query words dropped) -0.021; w=0.4 and 0.6 lose up to 0.055 and 0.052.
``min_dense`` (the turn's best cosine) is fitted where descriptions are realistic: on the train
split of the regression set over the bundled catalog (long "what + when" descriptions, whose
cosines run lower than Seal-Tools' one-liners), 0.18 is the highest threshold that keeps 98% of
on-topic requests: train 98.7% kept / 83.9% of off-topic rejected, validation 100% / 88.2%.
On Seal-Tools 0.35 would reject more off-topic chat (57% of 60 messages) but empties 20% of the
bundled catalog's real requests; a threshold only right for short descriptions is not a default.
``tail_ratio`` 0 (no cut after ranking): a turn the gate lets through shows its top k. A cut
at 0.45 trimmed one-skill requests from 4.95 to 4.44 skills but cost recall on tool catalogs
(1.5-2.2 points of recall@5) and on multi-skill tasks, while a skill revealed once costs a few
dozen tokens per session since the catalogs keep the prompt cache; the gate alone refuses
off-topic turns. A cut kept below ``min(w, 1 - w)`` never removes either retriever's top hit.
Cosine thresholds are model-specific: set ``min_dense`` to 0 or recalibrate for another model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from router.calibration.fusion_terms import (
    DenseScale,
    FusionConfig,
    Hits,
    lexical_scale,
    pool,
    query_views,
    split_sentences,
    unit,
)
from router.routing.model import DropReason

log = logging.getLogger(__name__)

# fusion's terms live below the index (the settings fit uses them too); named here for the turn
__all__ = ["DENSE", "FUSED", "LEXICAL", "Fused", "FusionConfig", "GateResult", "Hits", "fuse",
           "fuse_views", "gate", "history_text", "mix_history", "pool", "query_views",
           "split_sentences"]


class Fused(NamedTuple):
    """A candidate. ``dense``: best raw cosine over the views (if no dense view returned it, the
    highest of the views' lowest returned cosines, an upper bound); ``lexical``: raw BM25 score
    of its best view (0 if unmatched); ``fused``: the combined score, in [0, 1]. A tuple: a
    turn makes one per candidate, about a hundred."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, never called on one
    dense: float
    lexical: float
    fused: float


# ``Fused(*row)`` without its Python-level ``__new__``: a turn makes about a hundred
_as_fused = partial(tuple.__new__, Fused)
# A field of every candidate, for ``max(map(...))`` (a third of a generator's time)
DENSE, LEXICAL, FUSED = attrgetter("dense"), attrgetter("lexical"), attrgetter("fused")


class GateResult(NamedTuple):
    """Candidates kept (in order) and those dropped with the reason; unpacks as a pair."""

    kept: tuple[Fused, ...]
    dropped: tuple[tuple[Fused, DropReason], ...] = ()


def history_text(history: Sequence[str], config: FusionConfig) -> str:
    """The last ``history_turns`` non-empty earlier turns, oldest first, one per line."""
    turns = [t.strip() for t in history if t.strip()]
    if config.history_turns <= 0:
        return ""
    return "\n".join(turns[-config.history_turns :])


def mix_history(message: np.ndarray, history: np.ndarray, weight: float) -> np.ndarray:
    """``normalise(message + weight * history)``: the message vector nudged toward the context."""
    return unit(np.asarray(message, dtype=np.float32) + weight * np.asarray(history, np.float32))


# Per id its best (raw score, normalised weighted score) over a turn's views, as three arrays
# sorted by id: ids, raws, normalised.
_Best = tuple[np.ndarray, np.ndarray, np.ndarray]
_NONE: _Best = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))


def _keep_best(ids: list[np.ndarray], raws: list[np.ndarray], norms: list[np.ndarray]) -> _Best:
    """Per id, the view with the highest normalised score (ties: the earliest view)."""
    if not ids:
        return _NONE
    if len(ids) == 1:  # one view (most turns): its ids are distinct, so sorting is all
        order = np.argsort(ids[0], kind="stable")
        ranked = ids[0][order].astype(np.int64, copy=False)
        if (ranked[1:] != ranked[:-1]).all():
            return ranked, raws[0][order], norms[0][order]
    all_ids = np.concatenate(ids).astype(np.int64, copy=False)
    raw, norm = np.concatenate(raws), np.concatenate(norms)
    order = np.lexsort((-norm, all_ids))  # stable: equal scores keep the views' order
    ranked = all_ids[order]
    first = np.ones(len(ranked), dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    pick = order[first]
    return all_ids[pick], raw[pick], norm[pick]


def _dense_best(views: Sequence[Hits], baseline: float) -> tuple[_Best, tuple[float, float]]:
    """Best cosine per id over the views, and (raw, normalised) for ids no view returned."""
    scale = DenseScale.of(views, baseline)
    if scale is None:
        return _NONE, (0.0, 0.0)
    ids, raws, norms = [], [], []
    for view in views:
        if len(view.ids):
            raw = np.asarray(view.scores, dtype=np.float64)
            ids.append(np.asarray(view.ids))
            raws.append(raw)
            norms.append(scale(raw) * view.weight)
    return _keep_best(ids, raws, norms), (scale.floor, scale.floor_score)


def _lexical_best(views: Sequence[Hits]) -> _Best:
    """Best over the views of score / view's top score * view weight."""
    ids, raws, norms = [], [], []
    for view in views:
        raw = np.asarray(view.scores, dtype=np.float64)
        scaled = lexical_scale(raw)
        if scaled is not None:
            ids.append(np.asarray(view.ids))
            raws.append(raw)
            norms.append(scaled * view.weight)
    return _keep_best(ids, raws, norms)


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.union1d(a, b)`` of two sorted id arrays without repeats (a quarter of its time:
    it takes the general path, a hash table, for a turn's hundred ids)."""
    ids = np.concatenate((a, b))
    ids.sort()
    first = np.empty(len(ids), dtype=bool)
    first[:1] = True
    np.not_equal(ids[1:], ids[:-1], out=first[1:])
    return ids[first]


def _spread(best: _Best, ids: np.ndarray, missing: tuple[float, float],
            ) -> tuple[np.ndarray, np.ndarray]:
    """``best``'s (raws, normalised) at ``ids`` (sorted), ``missing`` where it has none."""
    raw = np.full(len(ids), missing[0], dtype=np.float64)
    norm = np.full(len(ids), missing[1], dtype=np.float64)
    at = np.searchsorted(ids, best[0])
    raw[at], norm[at] = best[1], best[2]
    return raw, norm


def fuse(dense_ids: np.ndarray, dense_scores: np.ndarray, lex_ids: np.ndarray,
         lex_scores: np.ndarray, config: FusionConfig, *, dense_baseline: float = 0.0,
         ) -> list[Fused]:
    """:func:`fuse_views` for a single view (the whole message)."""
    dense = [Hits(np.asarray(dense_ids), np.asarray(dense_scores))]
    lexical = [Hits(np.asarray(lex_ids), np.asarray(lex_scores))]
    return fuse_views(dense, lexical, config, dense_baseline=dense_baseline)


def fuse_views(dense: Sequence[Hits], lexical: Sequence[Hits], config: FusionConfig, *,
               dense_baseline: float = 0.0) -> list[Fused]:
    """Every candidate either side retrieved in any view, best first (ties: lower index)."""
    d_best, d_floor = _dense_best(dense, dense_baseline)
    l_best = _lexical_best(lexical)
    ids = _union(d_best[0], l_best[0])
    if not len(ids):
        return []
    d_raw, d_norm = _spread(d_best, ids, d_floor)
    l_raw, l_norm = _spread(l_best, ids, (0.0, 0.0))
    w = config.dense_weight
    fused = w * d_norm + (1.0 - w) * l_norm  # as Python floats would: float64, op by op
    order = np.lexsort((ids, -fused))
    rows = zip(ids[order].tolist(), d_raw[order].tolist(), l_raw[order].tolist(),
               fused[order].tolist(), strict=True)
    return list(map(_as_fused, rows))


def gate(fused: Sequence[Fused], config: FusionConfig, *, dense_used: bool = True) -> GateResult:
    """Drop everything when the turn's best cosine is below ``min_dense`` (only when the dense
    side was searched); then drop candidates under ``min_fused`` or under ``tail_ratio`` times
    the best fused score. Kept candidates stay in the given order."""
    if not fused:
        return GateResult(())
    best_dense = max(map(DENSE, fused))
    if dense_used and config.min_dense > 0 and best_dense < config.min_dense:
        return GateResult((), tuple((f, DropReason.BELOW_THRESHOLD) for f in fused))
    # kept: neither under min_fused nor (with a tail cut) under tail_ratio x the best
    floor = config.min_fused
    cut = max(floor, config.tail_ratio * max(map(FUSED, fused))) if config.tail_ratio > 0 \
        else floor
    kept = tuple([f for f in fused if not f.fused < cut])
    if len(kept) == len(fused):
        return GateResult(kept)
    below, gap = DropReason.BELOW_THRESHOLD, DropReason.SCORE_GAP
    return GateResult(kept, tuple([(f, below if f.fused < floor else gap)
                                   for f in fused if f.fused < cut]))
