"""Routing settings fitted to one catalog from its own example requests (pure: numpy, with the
encoder and the BM25 builder passed in).

No fixed fusion weight or way of using examples is right for every catalog: where skill authors
and users share words BM25 leads, where they do not the embedding does, and examples help most
as single neighbours on some catalogs and as a shift of the skill's vector on others. A build
with enough example requests therefore measures, by ``FOLDS``-fold cross-validation over those
examples (each held-out request routed against an index that holds the other folds' examples),
every combination of

* the dense weight of fusion (``WEIGHTS``),
* which example evidence scores a skill (``router.examples.scoring.MODES``), and
* whether the skill's BM25 document is expanded with its examples' text,

and chooses among them in two steps, each a sign test at two sigmas over the held-out requests
where a request counts as won by the combination that finds more of its skills in the top 5,
or, finding as many, ranks the first one higher (ranks separate combinations where recall
cannot: requests learned from traffic were by construction all found when they were learned,
so every combination finds nearly all of them again).

1. The prior is full use of the evidence (``router.calibration.settings_choice.PRIOR``: dense
   weight 0.7, both kinds of example evidence, BM25 documents expanded with the examples'
   text): on two public catalogs it was the best combination with curated and with learned
   examples. It stays unless the combination with the best recall@5 (then MRR@10) beats it.
2. When that shows harm (on the Seal-Tools dev set, expanded documents lose: example requests
   carry argument values that match other skills), the plain defaults (``fusion.dense_weight``,
   the example view, plain BM25) are served unless the best combination beats them too.

Only requests the encoder did not train on judge: with a fine-tuned encoder (its training
requests passed as ``trained``) those are the fine-tune's held-out fold (and any past its pair
bound); an encoder that has seen a request ranks it far better than it will rank a new one
(on a public 199-skill catalog the fit's own recall@5 was 0.907 judged on the training
requests, 0.811 on test requests), which drew the fit to heavy dense weights. The judging
requests (hashed) and the encoder are recorded (``Judged``). The gate is still fitted on every
held-out request: on the Seal-Tools dev set the 147 unseen ones alone let the strictest gate
through (train recall@5 0.921 against 0.925, 0.7% of its 809 train requests given nothing).

The choice, the figures behind it and the reason in words are stored in the manifest and shown
by ``info``; Explain shows the settings a turn was routed with and why they were chosen. Each
held-out request's evidence under the chosen settings (best cosine, best BM25 score) is handed
back too: those are the catalog's on-topic requests, which the relevance gate is fitted on
(``router.calibration.gate_fit``).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol

import numpy as np

from router.calibration.fusion_terms import (
    DenseScale,
    FusionConfig,
    Hits,
    lexical_scale,
    pool,
    query_views,
)
from router.calibration.settings import Fit, HeldOut, Judged, Seen, request_hash
from router.calibration.settings_choice import choose
from router.examples.model import query_key
from router.examples.scoring import (
    MODES,
    VIEW,
    ExampleIndex,
    ExampleMode,
    example_index,
    positive_texts,
    top_rows,
    with_examples,
)

log = logging.getLogger(__name__)

FOLDS = 5
WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
MIN_HELD_OUT = 40  # fewer distinct example requests than this: keep the defaults
MAX_HELD_OUT = 1000  # at most this many are routed (a fixed hash-ordered sample)
TOP = 5
DEFAULT_MODE = VIEW


class Searcher(Protocol):
    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...


class ExampleRows(NamedTuple):
    """The example rows a fit learns from: row ``i`` is request ``queries[i]`` for the skill at
    position ``skill[i]`` (a counter-example when ``negative[i]``), embedded as ``vectors[i]``;
    ``query_vectors``: the rows as the encoder that serves queries embeds them, when those are
    not ``vectors`` (an int8 copy)."""

    queries: Sequence[str]
    skill: np.ndarray
    negative: np.ndarray
    vectors: np.ndarray
    query_vectors: np.ndarray | None = None


@dataclass(frozen=True)
class _Fold:
    """What one fold's held-out requests are scored against."""

    skill_vectors: np.ndarray
    centroid: np.ndarray
    index: ExampleIndex | None  # the other folds' examples
    lexical: tuple[Searcher, Searcher]  # BM25: plain, expanded with the other folds' examples


def fold_of(query: str) -> int:
    """The fold of an example request (by its normalised text, so repeats share a fold)."""
    return zlib.crc32(query_key(query).encode("utf-8")) % FOLDS


@dataclass(frozen=True)
class _Request:
    text: str
    expected: frozenset[int]
    fold: int
    views: tuple[str, ...]  # query_views of the request (the first: the whole text)
    vectors: np.ndarray  # one row per view
    judges: bool  # the encoder did not train on it: it judges the settings


def _held_out(queries: Sequence[str], skill: np.ndarray, negative: np.ndarray,
              vectors: np.ndarray, encode: Callable[[Sequence[str]], np.ndarray],
              fusion: FusionConfig, trained: AbstractSet[str]) -> tuple[list[_Request], int]:
    """The held-out requests (those the encoder did not train on, ``trained`` query keys,
    first: they judge), and how many the encoder trained on."""
    groups: dict[str, tuple[str, set[int], int]] = {}
    for i, (text, pos, neg) in enumerate(zip(queries, skill.tolist(), negative.tolist(),
                                             strict=True)):
        if not neg:
            groups.setdefault(query_key(text), (text, set(), i))[1].add(int(pos))
    left_out = sum(1 for key in groups if key in trained)
    chosen = sorted(groups.values(), key=lambda g: (query_key(g[0]) in trained,
                                                    zlib.crc32(g[0].encode("utf-8")), g[0]))
    chosen = chosen[:MAX_HELD_OUT]
    views = [query_views(text, fusion) for text, _, _ in chosen]
    sentences = sorted({s for v in views if len(v) > 1 for s in v[1:]})
    encoded = dict(zip(sentences, np.asarray(encode(sentences), dtype=np.float32),
                       strict=True)) if sentences else {}
    out = []
    for (text, expected, row), view in zip(chosen, views, strict=True):
        if len(view) == 1:
            matrix = vectors[row][None, :].astype(np.float32)
        else:
            parts = np.stack([encoded[s] for s in view[1:]])
            matrix = np.vstack([pool(parts)[None, :], parts])
        out.append(_Request(text, frozenset(expected), fold_of(text), tuple(view), matrix,
                            query_key(text) not in trained))
    return out, left_out


def _dense(skill_vectors: np.ndarray, query: np.ndarray, depth: int) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    sims = skill_vectors @ query
    ids = top_rows(sims, depth)
    return ids.astype(np.int64), sims[ids]


def _combos() -> list[tuple[float, ExampleMode, bool]]:
    return [(w, m, e) for e in (False, True) for m in MODES for w in WEIGHTS]


def fit_to_examples(skill_vectors: np.ndarray, centroid: np.ndarray, rows: ExampleRows,
                    encode: Callable[[Sequence[str]], np.ndarray],
                    lexical_for: Callable[[Mapping[int, Sequence[str]]], Searcher],
                    fusion: FusionConfig | None = None, seen: Seen | None = None) -> Fit | None:
    """Cross-validate every combination (module doc) over the example ``rows`` against the
    skills (``centroid``: their mean vector). ``encode`` embeds sentence views;
    ``lexical_for(extra)`` builds a BM25 index over the skills' documents with
    ``extra[skill]`` texts appended. Returns the chosen settings and each held-out request's
    evidence under them; None when there are too few examples. A held-out request is routed
    on ``rows.query_vectors`` when given, as a turn is. Only requests whose
    ``query_key`` is not in ``seen.trained`` (those the encoder was fine-tuned on) judge the
    settings; every row still serves as another fold's example, and every held-out request's
    evidence is handed back for the gate. None when too few requests can judge."""
    fusion = fusion or FusionConfig()
    queries, vectors, held_out_vectors = rows.queries, rows.vectors, rows.query_vectors
    skill = np.asarray(rows.skill, dtype=np.int64)
    negative = np.asarray(rows.negative, dtype=bool)
    encoder, trained = seen or Seen()
    requests, left_out = _held_out(queries, skill, negative,
                                   vectors if held_out_vectors is None else held_out_vectors,
                                   encode, fusion, trained)
    judges = np.array([r.judges for r in requests], dtype=bool)
    if trained and int(judges.sum()) < MIN_HELD_OUT:
        log.info("routing settings: %d example requests the encoder did not train on, under "
                 "%d: the defaults stay", int(judges.sum()), MIN_HELD_OUT)
    if int(judges.sum()) < MIN_HELD_OUT or len(skill_vectors) == 0:
        return None
    combos = _combos()
    recall = np.zeros((len(requests), len(combos)))
    rr = np.zeros((len(requests), len(combos)))
    best = np.zeros((len(requests), len(MODES) + 1))  # best cosine per example mode; none
    words = np.zeros((len(requests), 2))  # best BM25 score: plain, expanded
    folds = np.array([fold_of(q) for q in queries], dtype=np.int64)
    plain = lexical_for({})
    for fold in range(FOLDS):
        train = folds != fold
        index = None
        if np.any(train & ~negative):
            index = example_index([q for q, t in zip(queries, train, strict=True) if t],
                                  skill[train], negative[train], vectors[train], skill_vectors)
        expanded = lexical_for(positive_texts(index) if index is not None else {})
        against = _Fold(skill_vectors, centroid, index, (plain, expanded))
        for k, req in enumerate(requests):
            if req.fold == fold:
                best[k], words[k] = _score(req, against, combos, fusion, recall[k], rr[k])
    settings = choose(combos, recall[judges], rr[judges],
                      (fusion.dense_weight, DEFAULT_MODE, False), FOLDS)
    judged = Judged(encoder, tuple(request_hash(query_key(r.text)) for r in requests
                                   if r.judges), left_out)
    settings = replace(settings, judged=judged,
                       reason=f"{settings.reason}; {judged.reason()}")
    held_out = HeldOut(best[:, MODES.index(settings.example_mode)].astype(np.float32),
                       words[:, int(settings.expand_lexical)].astype(np.float32),
                       np.stack([r.vectors[0] for r in requests]).astype(np.float32),
                       best[:, -1].astype(np.float32), words[:, 0].astype(np.float32))
    return Fit(settings, held_out)


def _score(req: _Request, fold: _Fold, combos: Sequence[tuple[float, ExampleMode, bool]],
           fusion: FusionConfig, recall: np.ndarray, rr: np.ndarray,
           ) -> tuple[list[float], list[float]]:
    """Score one held-out request under every combination into ``recall`` and ``rr``; return
    its best cosine per example mode and without examples, and its best BM25 score per BM25
    index (plain, expanded)."""
    index = fold.index
    described = [_dense(fold.skill_vectors, q, fusion.depth) for q in req.vectors]
    dense_by_mode: dict[str, list[Hits]] = {}
    for mode in MODES:
        if index is None:
            dense_by_mode[mode] = [Hits(ids, scores) for ids, scores in described]
        else:
            hits = []
            for (ids, scores), q in zip(described, req.vectors, strict=True):
                ev = with_examples(ids, scores, index, q, mode)
                hits.append(Hits(ev.ids, ev.scores))
            dense_by_mode[mode] = hits
    lexical_hits = [[Hits(*searcher.search(t, fusion.depth)) for t in req.views]
                    for searcher in fold.lexical]
    baseline = float(req.vectors[0] @ fold.centroid)
    weights = np.asarray(WEIGHTS)
    column = {combo: i for i, combo in enumerate(combos)}
    for mode in MODES:
        for expand in (False, True):
            ids, top = fuse_all(dense_by_mode[mode], lexical_hits[int(expand)], baseline,
                                 weights)
            for j, w in enumerate(WEIGHTS):
                ranked = ids[top[j]].tolist()
                i = column[(w, mode, expand)]
                recall[i] = len(req.expected & set(ranked[:TOP])) / len(req.expected)
                rr[i] = next((1.0 / (k + 1) for k, s in enumerate(ranked)
                              if s in req.expected), 0.0)
    best = [max((float(np.max(h.scores)) for h in dense_by_mode[m] if len(h.ids)), default=0.0)
            for m in MODES]
    best.append(max((float(np.max(scores)) for _, scores in described if len(scores)),
                    default=0.0))
    words = [max((float(np.max(h.scores)) for h in hits if len(h.ids)), default=0.0)
             for hits in lexical_hits]
    return best, words


def fuse_all(dense: Sequence[Hits], lexical: Sequence[Hits], baseline: float,
              weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fusion.fuse_views`` for every dense weight at once: the candidates (ascending ids)
    and, per weight, the positions of its ten best (ties: lower id), as fuse_views ranks."""
    d_ids = [np.asarray(h.ids, dtype=np.int64) for h in dense if len(h.ids)]
    d_raw = [np.asarray(h.scores, dtype=np.float64) for h in dense if len(h.ids)]
    l_hits = [h for h in lexical if len(h.ids) and float(np.max(h.scores)) > 0]
    ids = np.unique(np.concatenate([*d_ids, *(np.asarray(h.ids, np.int64) for h in l_hits),
                                    np.zeros(0, np.int64)]))
    d = np.full(len(ids), -np.inf)
    scale = DenseScale.of(dense, baseline)
    if scale is not None:
        for i, raw, hits in zip(d_ids, d_raw, (h for h in dense if len(h.ids)), strict=True):
            np.maximum.at(d, np.searchsorted(ids, i), scale(raw) * hits.weight)
    d[np.isneginf(d)] = scale.floor_score if scale is not None else 0.0
    lex = np.zeros(len(ids))
    for h in l_hits:
        scaled = lexical_scale(np.asarray(h.scores, dtype=np.float64))
        if scaled is not None:
            np.maximum.at(lex, np.searchsorted(ids, np.asarray(h.ids, np.int64)),
                          scaled * h.weight)
    fused = weights[:, None] * d[None, :] + (1.0 - weights)[:, None] * lex[None, :]
    return ids, np.argsort(-fused, axis=1, kind="stable")[:, :10]
