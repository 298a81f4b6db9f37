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
``tail_ratio`` 0.45 costs no recall (0.907 / 0.906 after the gate) and trims one-skill requests
from 4.95 to 4.44 skills; kept below ``min(w, 1 - w)`` it never cuts either retriever's top hit.
Cosine thresholds are model-specific: set ``min_dense`` to 0 or recalibrate for another model.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from router.encoders.base import normalise
from router.routing.model import DropReason

log = logging.getLogger(__name__)

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(\[])|\n+")


@dataclass(frozen=True)
class FusionConfig:
    """Every tuned constant of fusion and gating, with its measured default."""

    dense_weight: float = 0.5  # lexical weight is 1 - dense_weight
    depth: int = 50  # top-N asked from each retriever per view
    max_segments: int = 6  # sentence views per message; 0 or 1 disables them
    min_segment_words: int = 3  # shorter sentences are merged into the one before
    min_dense: float = 0.18  # gate: the turn's best cosine must reach this; 0 disables
    min_fused: float = 0.0  # gate: a candidate's fused score must reach this
    tail_ratio: float = 0.45  # drop candidates below tail_ratio * best fused; 0 disables
    history_weight: float = 0.4  # weight of earlier turns (vector mix and lexical view)
    history_turns: int = 2  # earlier user turns considered

    def __post_init__(self) -> None:
        for name in ("dense_weight", "tail_ratio", "history_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {getattr(self, name)}")
        if self.depth < 1:
            raise ValueError(f"depth must be at least 1, got {self.depth}")


@dataclass(frozen=True)
class Hits:
    """One retriever's top-N for one view: row ids and raw scores, best first."""

    ids: np.ndarray
    scores: np.ndarray
    weight: float = 1.0


@dataclass(frozen=True)
class Fused:
    """A candidate. ``dense``: best raw cosine over the views (if no dense view returned it, the
    highest of the views' lowest returned cosines, an upper bound); ``lexical``: raw BM25 score
    of its best view (0 if unmatched); ``fused``: the combined score, in [0, 1]."""

    index: int
    dense: float
    lexical: float
    fused: float


class GateResult(NamedTuple):
    """Candidates kept (in order) and those dropped with the reason; unpacks as a pair."""

    kept: tuple[Fused, ...]
    dropped: tuple[tuple[Fused, DropReason], ...] = ()


def query_views(message: str, config: FusionConfig) -> list[str]:
    """The whole message, then its sentences when there are at least two of them."""
    text = message.strip()
    if config.max_segments < 2 or not text:
        return [text]
    segments = split_sentences(text, config.min_segment_words)
    if len(segments) < 2:
        return [text]
    return [text, *_merge_to(segments, config.max_segments)]


def split_sentences(text: str, min_words: int = 3) -> list[str]:
    """Sentences of ``text``; fragments under ``min_words`` words join the previous sentence."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in _SENTENCE_END.split(text))):
        if out and len(part.split()) < min_words:
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _merge_to(segments: list[str], limit: int) -> list[str]:
    """Join neighbouring segments so that at most ``limit`` remain, keeping all text."""
    if len(segments) <= limit:
        return segments
    bounds = np.linspace(0, len(segments), limit + 1).round().astype(int).tolist()
    return [" ".join(segments[a:b]) for a, b in itertools.pairwise(bounds)]


def history_text(history: Sequence[str], config: FusionConfig) -> str:
    """The last ``history_turns`` non-empty earlier turns, oldest first, one per line."""
    turns = [t.strip() for t in history if t.strip()]
    if config.history_turns <= 0:
        return ""
    return "\n".join(turns[-config.history_turns :])


def _unit(vector: np.ndarray) -> np.ndarray:
    row: np.ndarray = normalise(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
    return row


def mix_history(message: np.ndarray, history: np.ndarray, weight: float) -> np.ndarray:
    """``normalise(message + weight * history)``: the message vector nudged toward the context."""
    return _unit(np.asarray(message, dtype=np.float32) + weight * np.asarray(history, np.float32))


def pool(vectors: np.ndarray) -> np.ndarray:
    """Normalised mean of (at least one) sentence vectors. Stands in for embedding the whole
    message: as good on the dev set, cheaper, and free of the model's input length cut-off."""
    return _unit(np.asarray(vectors, dtype=np.float32).mean(axis=0))


_Best = dict[int, tuple[float, float]]  # row id -> (raw score, normalised weighted score)


def _keep_best(best: _Best, view: Hits, raw: np.ndarray, norm: np.ndarray) -> None:
    for i, r, n in zip(view.ids.tolist(), raw.tolist(), norm.tolist(), strict=True):
        if i not in best or n > best[i][1]:
            best[i] = (r, n)


def _dense_best(views: Sequence[Hits], baseline: float) -> tuple[_Best, tuple[float, float]]:
    """Best cosine per id over the views, and (raw, normalised) for ids no view returned."""
    nonempty = [v for v in views if len(v.ids)]
    if not nonempty:
        return {}, (0.0, 0.0)
    top = max(float(np.max(v.scores)) for v in nonempty)
    floor = max(float(np.min(v.scores)) for v in nonempty)
    span = top - baseline

    def norm(raw: np.ndarray) -> np.ndarray:
        if span <= 0:
            return np.ones_like(raw)
        return np.asarray(np.clip((raw - baseline) / span, 0.0, 1.0))

    best: _Best = {}
    for view in nonempty:
        raw = np.asarray(view.scores, dtype=np.float64)
        _keep_best(best, view, raw, norm(raw) * view.weight)
    return best, (floor, float(norm(np.array([floor]))[0]))


def _lexical_best(views: Sequence[Hits]) -> _Best:
    """Best over the views of score / view's top score * view weight."""
    best: _Best = {}
    for view in views:
        raw = np.asarray(view.scores, dtype=np.float64)
        top = float(raw.max()) if len(raw) else 0.0
        if top > 0:
            _keep_best(best, view, raw, np.clip(raw / top, 0.0, 1.0) * view.weight)
    return best


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
    w = config.dense_weight
    out: list[Fused] = []
    for i in d_best.keys() | l_best.keys():
        d_raw, d_norm = d_best.get(i, d_floor)
        l_raw, l_norm = l_best.get(i, (0.0, 0.0))
        out.append(Fused(int(i), d_raw, l_raw, w * d_norm + (1.0 - w) * l_norm))
    out.sort(key=lambda f: (-f.fused, f.index))
    return out


def gate(fused: Sequence[Fused], config: FusionConfig, *, dense_used: bool = True) -> GateResult:
    """Drop everything when the turn's best cosine is below ``min_dense`` (only when the dense
    side was searched); then drop candidates under ``min_fused`` or under ``tail_ratio`` times
    the best fused score. Kept candidates stay in the given order."""
    if not fused:
        return GateResult(())
    best_dense = max(f.dense for f in fused)
    if dense_used and config.min_dense > 0 and best_dense < config.min_dense:
        return GateResult((), tuple((f, DropReason.BELOW_THRESHOLD) for f in fused))
    top = max(f.fused for f in fused)
    kept: list[Fused] = []
    dropped: list[tuple[Fused, DropReason]] = []
    for f in fused:
        if f.fused < config.min_fused:
            dropped.append((f, DropReason.BELOW_THRESHOLD))
        elif config.tail_ratio > 0 and f.fused < config.tail_ratio * top:
            dropped.append((f, DropReason.SCORE_GAP))
        else:
            kept.append(f)
    return GateResult(tuple(kept), tuple(dropped))
