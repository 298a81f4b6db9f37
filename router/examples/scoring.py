"""Example requests as dense evidence (pure, numpy only).

Each skill with positive examples gets a second vector, its *example view*:
``normalise(description vector + mean of its example vectors)``. A skill's dense score for a
turn is ``max(cos(turn, description), cos(turn, example view))``: examples move the skill
toward how users ask for it, and a skill is never scored below its own description, so nothing
is lost where examples do not help. A should-not-trigger example closer to the turn than the
skill's positive evidence pushes it down by the margin (``score - (neg - score)``). Explain
names the skill's closest positive example when the example view gave its score.

Chosen by measurement (docs/routing-quality.md; examples: the 700 labelled Seal-Tools
dev-split requests, scored on the 1,354 test requests; and the regression set's train split as
examples, scored on its validation split). Recall@5 / MRR@10 on the requests whose skills all
have examples, validation: Seal-Tools zero-shot 0.960 / 0.938, the example view 0.981 / 0.969,
``max(description, closest example)`` 0.967 / 0.938; regression set zero-shot 0.962 / 0.890,
the example view 0.962 / 0.896, closest example 0.949 / 0.873 (single requests are noisy
neighbours). Adding the examples' text to the skill's BM25 document lost 2.7 pp recall@5 on
Seal-Tools overall (example requests carry argument values and phrasing that match other
skills). Other catalogs pull the other way, so the view is only the default: a build with
enough examples chooses between the view, the closest example (``CLOSEST``) and both
(``BOTH``), and whether to expand BM25 documents, by cross-validation on the catalog's own
examples (``router.calibration.settings_fit``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SHORTLIST = 256  # example rows and example views considered per query view


class ExampleMode(enum.StrEnum):
    """Which example evidence scores a skill (a version's settings fit chooses it; the words
    are what its manifest records)."""

    VIEW = "view"
    CLOSEST = "closest"
    BOTH = "both"


VIEW, CLOSEST, BOTH = ExampleMode.VIEW, ExampleMode.CLOSEST, ExampleMode.BOTH
MODES = tuple(ExampleMode)


@dataclass(frozen=True)
class ExampleIndex:
    """Embedded example queries (row ``i`` is ``queries[i]`` of skill row ``skill[i]``) and the
    example view of every skill that has positive examples (``view_skill[j]``: ``views[j]``)."""

    queries: tuple[str, ...]
    skill: np.ndarray  # int64 skill positions
    negative: np.ndarray  # bool
    vectors: np.ndarray  # float32, normalised
    view_skill: np.ndarray  # int64 skill positions
    views: np.ndarray  # float32, normalised

    def __len__(self) -> int:
        return len(self.queries)


def example_index(queries: Sequence[str], skill: np.ndarray, negative: np.ndarray,
                  vectors: np.ndarray, skill_vectors: np.ndarray) -> ExampleIndex:
    """Build the index, with each taught skill's example view."""
    positive = ~negative
    taught = np.unique(skill[positive])
    views = np.zeros((len(taught), vectors.shape[1]), dtype=np.float32)
    for j, k in enumerate(taught.tolist()):
        v = skill_vectors[k] + vectors[positive & (skill == k)].mean(axis=0)
        views[j] = v / max(float(np.linalg.norm(v)), 1e-12)
    return ExampleIndex(tuple(queries), skill.astype(np.int64), negative.astype(bool),
                        np.ascontiguousarray(vectors, dtype=np.float32), taught.astype(np.int64),
                        views)


def positive_texts(index: ExampleIndex) -> dict[int, list[str]]:
    """Per skill position, the texts of its positive example requests."""
    out: dict[int, list[str]] = {}
    for query, skill, negative in zip(index.queries, index.skill.tolist(),
                                      index.negative.tolist(), strict=True):
        if not negative:
            out.setdefault(int(skill), []).append(query)
    return out


@dataclass(frozen=True)
class Evidence:
    """One view's dense candidates after examples: ids and scores best first, and for skills
    scored by their example view, the row of their closest positive example."""

    ids: np.ndarray
    scores: np.ndarray
    matched: dict[int, int]
    closest: float = -1.0  # cosine of the closest positive example (-1: none)


def top_rows(sims: np.ndarray, k: int = SHORTLIST) -> np.ndarray:
    """Rows of the ``k`` highest cosines, best first."""
    rows = np.argpartition(-sims, k - 1)[:k] if len(sims) > k else np.arange(len(sims))
    return rows[np.argsort(-sims[rows], kind="stable")]


def best_examples(index: ExampleIndex, sims: np.ndarray,
                  ) -> tuple[dict[int, int], dict[int, float]]:
    """Per skill: the row of its closest positive example and its closest negative cosine,
    given every example row's cosine ``sims`` to the query (the closest rows only)."""
    positive: dict[int, int] = {}
    negative: dict[int, float] = {}
    for row in top_rows(sims).tolist():
        skill = int(index.skill[row])
        if index.negative[row]:
            negative.setdefault(skill, float(sims[row]))
        else:
            positive.setdefault(skill, row)
    return positive, negative


def with_examples(ids: np.ndarray, scores: np.ndarray, index: ExampleIndex,
                  query: np.ndarray, mode: ExampleMode = VIEW) -> Evidence:
    """Merge one view's description hits with the example evidence (see module doc); ``mode``
    says which evidence counts: the example view, the closest example, or both."""
    best = dict(zip(ids.tolist(), np.asarray(scores, dtype=np.float64).tolist(), strict=True))
    query = np.asarray(query, dtype=np.float32)
    sims = index.vectors @ query
    closest, negative = best_examples(index, sims)
    matched: dict[int, int] = {}
    if mode in (CLOSEST, BOTH):
        for skill, row in closest.items():
            if float(sims[row]) > best.get(skill, -1.0):
                best[skill] = float(sims[row])
                matched[skill] = row
    if mode in (VIEW, BOTH):
        view_sims = index.views @ query
        top = top_rows(view_sims)  # only the closest example views can reach the shortlist
        for skill, sim in zip(index.view_skill[top].tolist(), view_sims[top].tolist(),
                              strict=True):
            if sim > best.get(skill, -1.0):
                best[skill] = sim
                if skill in closest:
                    matched[skill] = closest[skill]
    for skill, neg in negative.items():
        if skill in best and neg > best[skill]:
            best[skill] -= neg - best[skill]
            matched.pop(skill, None)
    order = sorted(best, key=lambda s: (-best[s], s))
    nearest = max((float(sims[row]) for row in closest.values()), default=-1.0)
    return Evidence(np.array(order, dtype=np.int64),
                    np.array([best[s] for s in order], dtype=np.float32), matched, nearest)


def best_cosines(queries: np.ndarray, skills: np.ndarray,
                 index: ExampleIndex | None, mode: ExampleMode = VIEW,
                 plain: np.ndarray | None = None) -> np.ndarray:
    """Each query's best cosine over skill descriptions and the example evidence ``mode``
    scores with (the evidence the relevance gate reads); ``plain``: the best over the skill
    descriptions alone, when already computed (``best_cosines`` with no ``index``)."""
    queries = np.asarray(queries, dtype=np.float32)
    if len(queries) == 0 or len(skills) == 0:
        return np.zeros(len(queries), dtype=np.float32)
    out = np.array(plain, dtype=np.float32) if plain is not None else \
        (queries @ np.asarray(skills, dtype=np.float32).T).max(axis=1)
    if index is not None and len(index.views) and mode in (VIEW, BOTH):
        out = np.maximum(out, (queries @ index.views.T).max(axis=1))
    positive = index.vectors[~index.negative] if index is not None else None
    if positive is not None and len(positive) and mode in (CLOSEST, BOTH):
        out = np.maximum(out, (queries @ positive.T).max(axis=1))
    return np.asarray(out, dtype=np.float32)


def closest_positive(queries: np.ndarray, index: ExampleIndex) -> np.ndarray:
    """Each query's cosine to its closest positive example (-1 where there is none)."""
    positive = index.vectors[~index.negative]
    if not len(positive) or not len(queries):
        return np.full(len(queries), -1.0, dtype=np.float32)
    return np.asarray((np.asarray(queries, dtype=np.float32) @ positive.T).max(axis=1),
                      dtype=np.float32)
