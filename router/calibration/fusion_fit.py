"""Fusion's dense weight fitted to a catalog with no example requests (pure: numpy, with the
BM25 searcher passed in).

Where skill authors and users share words BM25 leads, where they do not the embedding does; a
build with example requests measures that on them (``router.calibration.settings_fit``). A
build without any asks the catalog its own requests (``router.calibration.self_requests``:
sentences of the skills' bodies, each held out of its skill's BM25 document and never in its
vector), routes each one as fusion does at every weight of ``settings_fit.WEIGHTS``, and keeps
the default weight unless the weight with the best recall@5 (then MRR@10) beats it on clearly
more requests than it loses (``router.calibration.settings_choice``'s sign test). The choice,
the figures and the reason are recorded like an example fit's (``FittedSettings``), with
``held_out`` the catalog's own requests routed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from router.calibration.fusion_terms import FusionConfig, Hits
from router.calibration.self_requests import SelfRequest, without
from router.calibration.settings import FittedSettings
from router.calibration.settings_choice import SIGMAS, beats
from router.calibration.settings_fit import TOP, WEIGHTS, Searcher, fuse_all
from router.examples.scoring import VIEW, top_rows

MIN_REQUESTS = 40  # fewer of the catalog's own requests: the default weight stays
# a catalog this large keeps the default weight without examples: the fit builds a second BM25
# index over it (about a minute a million skills)
MAX_SKILLS = 200_000


def _route(vector: np.ndarray, text: str, position: int, skill_vectors: np.ndarray,
           baseline: float, lexical: Searcher, depth: int,
           weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recall@5 and reciprocal rank of skill ``position`` for one request, per weight."""
    sims = skill_vectors @ vector
    rows = top_rows(sims, depth)
    dense = [Hits(rows.astype(np.int64), sims[rows])]
    words = [Hits(*lexical.search(text, depth))]
    ids, top = fuse_all(dense, words, baseline, weights)
    ranked = ids[top]  # (weights, 10)
    found = ranked == position
    recall = found[:, :TOP].any(axis=1).astype(np.float64)
    first = np.where(found.any(axis=1), found.argmax(axis=1), -1)
    return recall, np.where(first >= 0, 1.0 / np.maximum(first + 1, 1), 0.0)


def fit_without_examples(skill_vectors: np.ndarray, centroid: np.ndarray,
                         requests: Sequence[SelfRequest], vectors: np.ndarray,
                         lexical: Searcher, fusion: FusionConfig | None = None,
                         ) -> FittedSettings | None:
    """The dense weight for the catalog (module doc) from its own ``requests`` (embedded as
    ``vectors``) and ``lexical``, BM25 over documents that lack each request's sentence; None
    when there are too few requests."""
    fusion = fusion or FusionConfig()
    if len(requests) < MIN_REQUESTS or not len(skill_vectors):
        return None
    weights = np.asarray(WEIGHTS)
    skills = np.asarray(skill_vectors, dtype=np.float32)
    recall = np.zeros((len(requests), len(weights)))
    rr = np.zeros_like(recall)
    for k, (request, vector) in enumerate(zip(requests, np.asarray(vectors, np.float32),
                                              strict=True)):
        recall[k], rr[k] = _route(vector, request.text, request.position, skills,
                                  float(vector @ centroid), lexical, fusion.depth, weights)
    mean_recall, mean_rr = recall.mean(axis=0), rr.mean(axis=0)
    best = max(range(len(weights)), key=lambda i: (mean_recall[i], mean_rr[i], -i))
    base = int(np.argmin(np.abs(weights - fusion.dense_weight)))
    better, wins, losses = beats(recall, rr, best, base)
    chosen = best if better else base
    reason = (f"fitted without examples on {len(requests)} of the catalog's own requests "
              f"(sentences of skill bodies): dense {weights[best]:.1f} ")
    reason += (f"beat the default {weights[base]:.1f} ({wins} better, {losses} worse)"
               if better else f"did not clearly beat the default {weights[base]:.1f} "
               f"({wins} better, {losses} worse at {SIGMAS:g} sigmas)")
    if best == base:
        reason = (f"fitted without examples on {len(requests)} of the catalog's own requests: "
                  f"the default dense {weights[base]:.1f} is the best weight")
    return FittedSettings(float(weights[chosen]), VIEW, False, len(requests),
                          float(mean_recall[chosen]), float(mean_rr[chosen]),
                          float(mean_recall[base]), float(mean_rr[base]), reason=reason)


def fit_to_own_requests(skill_vectors: np.ndarray, centroid: np.ndarray,
                        documents: Sequence[str], requests: Sequence[SelfRequest],
                        vectors: np.ndarray, build: Callable[[Sequence[str]], Searcher],
                        ) -> FittedSettings | None:
    """:func:`fit_without_examples` against BM25 over ``documents`` (``build`` makes the
    index), each request's sentence taken out of its skill's document first; None for a
    catalog over ``MAX_SKILLS`` or too few requests."""
    if len(documents) > MAX_SKILLS or len(requests) < MIN_REQUESTS:
        return None
    held = list(documents)
    for request in requests:
        held[request.position] = without(held[request.position], request.text)
    return fit_without_examples(skill_vectors, centroid, requests, vectors, build(held))
