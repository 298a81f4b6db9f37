"""Example requests as dense evidence (pure, numpy only).

A skill's dense score for a turn is ``max(cos(turn, description), max cos(turn, example))``:
an example request that reads like the turn lifts its skill as far as the closest example does,
and a skill without examples keeps its description score, so nothing is lost where examples are
few. A should-not-trigger example closer to the turn than all of the skill's positive evidence
pushes it down by the margin (``score - (neg - score)``).

Measured on the Seal-Tools dev set (700 labelled dev-split requests as examples, scored on the
1,354 test requests; see README "Routing quality"), against two alternatives: adding the
examples' text to the skill's BM25 document lost 2.7 pp recall@5 overall (example requests
carry argument values and request phrasing that match other skills), and lowering example
cosines by the request's typical cosine to examples (a phrasing baseline) changed recall@5 by
under 1 pp either way. Neither is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHORTLIST = 256  # example rows considered per view (the closest ones)


@dataclass(frozen=True)
class ExampleIndex:
    """Embedded example queries: row ``i`` is ``queries[i]`` of skill row ``skill[i]``."""

    queries: tuple[str, ...]
    skill: np.ndarray  # int64 skill positions
    negative: np.ndarray  # bool
    vectors: np.ndarray  # float32, normalised

    def __len__(self) -> int:
        return len(self.queries)


@dataclass(frozen=True)
class Evidence:
    """One view's dense candidates after examples: ids and scores best first, and for skills
    whose best evidence is an example, that example's row."""

    ids: np.ndarray
    scores: np.ndarray
    matched: dict[int, int]


def _closest(sims: np.ndarray) -> np.ndarray:
    """Rows of the ``SHORTLIST`` highest cosines, best first."""
    if len(sims) > SHORTLIST:
        rows = np.argpartition(-sims, SHORTLIST - 1)[:SHORTLIST]
    else:
        rows = np.arange(len(sims))
    return rows[np.argsort(-sims[rows], kind="stable")]


def best_examples(index: ExampleIndex, sims: np.ndarray,
                  ) -> tuple[dict[int, tuple[float, int]], dict[int, float]]:
    """Per skill: the closest positive example (cosine, row) and the closest negative cosine,
    given every example row's cosine ``sims`` to the query."""
    positive: dict[int, tuple[float, int]] = {}
    negative: dict[int, float] = {}
    for row in _closest(sims).tolist():
        skill, sim = int(index.skill[row]), float(sims[row])
        if index.negative[row]:
            negative.setdefault(skill, sim)
        else:
            positive.setdefault(skill, (sim, row))
    return positive, negative


def with_examples(ids: np.ndarray, scores: np.ndarray, index: ExampleIndex,
                  query: np.ndarray) -> Evidence:
    """Merge one view's description hits with the example evidence (see module doc)."""
    best = dict(zip(ids.tolist(), np.asarray(scores, dtype=np.float64).tolist(), strict=True))
    sims = index.vectors @ np.asarray(query, dtype=np.float32)
    positive, negative = best_examples(index, sims)
    matched: dict[int, int] = {}
    for skill, (sim, row) in positive.items():
        if sim > best.get(skill, -1.0):
            best[skill] = sim
            matched[skill] = row
    for skill, neg in negative.items():
        if skill in best and neg > best[skill]:
            best[skill] -= neg - best[skill]
            matched.pop(skill, None)
    order = sorted(best, key=lambda s: (-best[s], s))
    return Evidence(np.array(order, dtype=np.int64),
                    np.array([best[s] for s in order], dtype=np.float32), matched)


def best_cosines(queries: np.ndarray, skills: np.ndarray,
                 index: ExampleIndex | None) -> np.ndarray:
    """Each query's best cosine over skill descriptions and positive examples (the evidence
    the relevance gate reads)."""
    queries = np.asarray(queries, dtype=np.float32)
    if len(queries) == 0 or len(skills) == 0:
        return np.zeros(len(queries), dtype=np.float32)
    out = (queries @ np.asarray(skills, dtype=np.float32).T).max(axis=1)
    if index is not None and len(index) and (~index.negative).any():
        ex = (queries @ index.vectors[~index.negative].T).max(axis=1)
        out = np.maximum(out, ex)
    return np.asarray(out, dtype=np.float32)
