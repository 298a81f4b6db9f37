"""Naive baselines beside the product in ``skill-router eval`` (numpy; no gate, no tuning).

Two methods anyone would try first with the same encoder and the same example requests. The
product must stay ahead of both; ``eval`` prints them after its own table.

For a request ``q`` (its message only, embedded with the index's encoder; history unused) and a
skill ``s`` with description vector ``d_s`` (the index's skill vector: name words and
description) and positive example vectors ``e_s1 .. e_sm``:

centroid   dense(q, s) = cos(q, normalise(d_s + mean_i e_si)); cos(q, d_s) when ``m`` = 0
max-sim    dense(q, s) = max(cos(q, d_s), max_i cos(q, e_si))

Both fuse the dense score with BM25 over a per-skill document: the skill's own BM25 document
(``skill_document(name, description)``, as the product indexes it) followed by the texts of its
positive examples, indexed with the product's ``LexicalIndex`` (same tokenizer and BM25)::

    fused = 0.7 * dense / max_s dense + 0.3 * bm25 / max_s bm25

each maximum taken over all skills for this request (a maximum of 0 or less leaves that part 0).
Every skill is ranked by ``fused`` (ties: catalog order) and the top 10 scored with the same
``metrics`` as the product. The methods never refuse a request, so their "nothing" (off-topic
requests given no skill) is 0 by construction.

Examples are the rows the evaluated index was built with from ``--examples`` files and a
``--learn-from`` replay; examples in the skill folders' evals files are not counted. Only
positive rows count (request -> skill); a row naming a skill the catalog lacks is ignored, and
the same request given twice for a skill counts once (as the product's selection does, but
without its cap per skill). With no examples both methods are description cosine + BM25 over
the skill document: the zero-shot baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from router.encoders.base import normalise
from router.evaluation.metrics import Labelled, Outcome
from router.examples.model import Example, query_key
from router.index.lexical import LexicalIndex, skill_document
from router.skills.model import Skill

DENSE_WEIGHT = 0.7
RANK_DEPTH = 10
METHODS = ("centroid", "max_sim")
COLUMNS = ("n", "R@1", "R@3", "R@5", "MRR@10", "complete@5", "off-topic n", "nothing")

Encode = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Taught:
    """Positive example requests: ``texts[i]`` teaches skill row ``skill[i]``."""

    texts: tuple[str, ...]
    skill: np.ndarray  # int64 skill rows


def positive_rows(examples: Sequence[Example], names: Sequence[str]) -> Taught:
    """Every (request, skill) pair of ``examples`` whose skill is in ``names``, once each."""
    positions = {n: i for i, n in enumerate(names)}
    seen: set[tuple[int, str]] = set()
    texts: list[str] = []
    rows: list[int] = []
    for ex in examples:
        for name in ex.skills:
            row = positions.get(name)
            key = (row if row is not None else -1, query_key(ex.query))
            if row is None or key in seen:
                continue
            seen.add(key)
            texts.append(ex.query)
            rows.append(row)
    return Taught(tuple(texts), np.asarray(rows, dtype=np.int64))


def centroid_vectors(desc: np.ndarray, examples: np.ndarray, skill: np.ndarray) -> np.ndarray:
    """``normalise(d_s + mean of s's example vectors)`` per skill row; ``d_s`` when untaught."""
    desc = np.asarray(desc, dtype=np.float32)
    if not len(skill):
        return normalise(desc)
    sums = np.zeros_like(desc)
    np.add.at(sums, skill, np.asarray(examples, dtype=np.float32))
    counts = np.bincount(skill, minlength=len(desc)).astype(np.float32)
    return normalise(desc + sums / np.maximum(counts, 1.0)[:, None])


def max_sim_scores(queries: np.ndarray, desc: np.ndarray, examples: np.ndarray,
                   skill: np.ndarray) -> np.ndarray:
    """``max(cos(q, d_s), max over s's examples of cos(q, e))``, shape (queries, skills)."""
    scores = np.asarray(queries @ desc.T, dtype=np.float32)
    if not len(skill):
        return scores
    order = np.argsort(skill, kind="stable")
    grouped = skill[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    best = np.maximum.reduceat(queries @ examples[order].T, starts, axis=1)
    taught = grouped[starts]
    scores[:, taught] = np.maximum(scores[:, taught], best)
    return scores


def skill_documents(skills: Sequence[Skill], taught: Taught) -> list[str]:
    """Each skill's BM25 document followed by the texts of its positive examples."""
    extra: dict[int, list[str]] = {}
    for text, row in zip(taught.texts, taught.skill.tolist(), strict=True):
        extra.setdefault(int(row), []).append(text)
    return [" ".join([skill_document(s.name, s.description), *extra.get(i, ())])
            for i, s in enumerate(skills)]


def lexical_scores(index: LexicalIndex, queries: Sequence[str]) -> np.ndarray:
    """BM25 of every document for every query, shape (queries, documents)."""
    every = np.arange(len(index), dtype=np.int64)
    out = np.zeros((len(queries), len(index)), dtype=np.float32)
    for i, query in enumerate(queries):
        out[i] = index.scores_for(query, every)
    return out


def _by_turn_max(scores: np.ndarray) -> np.ndarray:
    """Each row divided by its maximum; a row whose maximum is not positive becomes 0."""
    top = scores.max(axis=1, keepdims=True) if scores.shape[1] else np.zeros((len(scores), 1))
    safe = np.where(top > 0, top, 1.0)
    return np.where(top > 0, scores / safe, 0.0).astype(np.float32)


def fuse(dense: np.ndarray, lexical: np.ndarray, weight: float = DENSE_WEIGHT) -> np.ndarray:
    """``weight * dense / turn max + (1 - weight) * bm25 / turn max``, row by row."""
    return weight * _by_turn_max(dense) + (1.0 - weight) * _by_turn_max(lexical)


def top_ranked(fused: np.ndarray, depth: int = RANK_DEPTH) -> np.ndarray:
    """Row indices of the best ``depth`` skills per request, best first (ties: lower row)."""
    return np.argsort(-fused, axis=1, kind="stable")[:, :depth]


def outcomes(skills: Sequence[Skill], desc: np.ndarray, encode: Encode,
             requests: Sequence[Labelled],
             examples: Sequence[Example]) -> dict[str, list[Outcome]]:
    """Both baselines' outcomes for ``requests``, keyed by ``METHODS``.

    ``desc`` holds the skills' vectors (row ``i`` = ``skills[i]``) and ``encode`` is the same
    encoder that made them.
    """
    names = [s.name for s in skills]
    if not names or not requests:
        return {m: [Outcome(r, ()) for r in requests] for m in METHODS}
    taught = positive_rows(examples, names)
    texts = [r.query for r in requests]
    encoded = encode([*texts, *taught.texts])
    queries, ex_vectors = encoded[: len(texts)], encoded[len(texts):]
    desc = np.asarray(desc, dtype=np.float32)
    bm25 = lexical_scores(LexicalIndex.build(skill_documents(skills, taught)), texts)
    dense = {"centroid": queries @ centroid_vectors(desc, ex_vectors, taught.skill).T,
             "max_sim": max_sim_scores(queries, desc, ex_vectors, taught.skill)}
    return {method: [Outcome(req, tuple(names[int(j)] for j in row))
                     for req, row in zip(requests, top_ranked(fuse(dense[method], bm25)),
                                         strict=True)]
            for method in METHODS}
