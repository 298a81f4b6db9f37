"""Hard negatives for encoder fine-tuning, mined from the catalog: for each training request,
the closest wrong skill by the base encoder (cosine to the skill's embedded text) and by BM25
(over the skill's name words and description, as the lexical index), never one of the skills
the request's examples name. Each pair of the request takes one of them (by a hash of request
and skill, so the same inputs give the same pairs) as an explicit negative column of
``MultipleNegativesRankingLoss`` (``router.encoders.training``).

``passed_over`` makes the pairs of the other weak negatives: the skills a turn showed beside
the one activated (``Example.passed_over``, learned from traffic), never a right skill.

Each makes the pairs of one candidate run (``index.hard_negatives``,
``index.passed_over_negatives``: ``candidates``), kept only when it wins on held-out requests.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from router.encoders.base import Embedder
from router.encoders.training import Pair
from router.examples.model import Example, query_key
from router.index.lexical import LexicalIndex, skill_document
from router.index.vectors import embed_skills, embedding_text
from router.skills.model import Skill

log = logging.getLogger(__name__)


def closest_wrong(dense: np.ndarray, lexical: Sequence[int], right: frozenset[int]) -> list[int]:
    """The closest wrong skills of one request: the best-scored position of ``dense`` (ties:
    the lower position) outside ``right``, then the first of ``lexical`` (BM25 order) outside
    ``right`` when it is another; empty when every skill is right."""
    scores = np.asarray(dense, dtype=np.float64).copy()
    scores[list(right)] = -np.inf
    out: list[int] = []
    if len(scores) and np.isfinite(scores).any():
        out.append(int(np.argmax(scores)))  # argmax: the first of equal maxima
    bm25 = next((int(i) for i in lexical if int(i) not in right), None)
    if bm25 is not None and bm25 not in out:
        out.append(bm25)
    return out


def mine(skills: Sequence[Skill], pairs: Sequence[Pair], every: Sequence[Pair], base: Embedder,
         cache: dict[str, np.ndarray]) -> list[Pair]:
    """``pairs`` with a mined negative each (empty when a request has no wrong skill). The
    right skills of a request are those of all its pairs in ``every`` (training and held-out).
    ``cache`` (``vectors.text_key`` keyed) is read and filled with the base skill vectors."""
    positions = {s.key: i for i, s in enumerate(skills)}
    right = _right(every, positions)
    queries = sorted({query_key(p.query): p.query for p in pairs}.items())
    vectors, _ = embed_skills(skills, base, cache, False)
    asked = base.encode([q for _, q in queries]) if queries else np.zeros((0, 1))
    lexical = LexicalIndex.build([skill_document(s.name, s.description) for s in skills])
    depth = 1 + max((len(r) for r in right.values()), default=0)
    found: dict[str, list[int]] = {}
    for (key, text), vector in zip(queries, asked, strict=True):
        ids, _ = lexical.search(text, depth)
        found[key] = closest_wrong(vectors @ np.asarray(vector), ids.tolist(),
                                   frozenset(right[key]))
    if any(not f for f in found.values()):
        return []
    out = _with_negatives(skills, pairs, found)
    log.info("mined hard negatives for %d training requests (%d pairs)", len(found), len(out))
    return out


def passed_over(skills: Sequence[Skill], pairs: Sequence[Pair], every: Sequence[Pair],
                examples: Sequence[Example]) -> list[Pair]:
    """``pairs``, those of a request that traffic showed with other skills passed over
    (``Example.passed_over``, any example of the request) each with one of them as its negative
    (by a hash of request and skill), never a right skill of the request (any of its pairs in
    ``every``); the others as they are. Empty when no pair gets one."""
    positions = {s.key: i for i, s in enumerate(skills)}
    right = _right(every, positions)
    passed: dict[str, set[int]] = {}
    for e in examples:
        shown = {positions[name] for name in e.passed_over if name in positions}
        if shown:
            passed.setdefault(query_key(e.query), set()).update(shown)
    found = {key: sorted(shown - right.get(key, set())) for key, shown in passed.items()}
    out = _with_negatives(skills, pairs, {k: v for k, v in found.items() if v})
    weak = sum(bool(p.negative) for p in out)
    log.info("passed-over skills as weak negatives for %d of %d training pairs", weak, len(out))
    return out if weak else []


def _right(every: Sequence[Pair], positions: Mapping[str, int]) -> dict[str, set[int]]:
    """The catalog positions of each request's right skills (``query_key`` keyed)."""
    right: dict[str, set[int]] = {}
    for p in every:
        right.setdefault(query_key(p.query), set()).add(positions[p.skill])
    return right


def _with_negatives(skills: Sequence[Skill], pairs: Sequence[Pair],
                    found: Mapping[str, Sequence[int]]) -> list[Pair]:
    """Each pair with one of its request's ``found`` skills as its negative (by a hash of
    request and skill: the same inputs, the same pairs); a request without any is unchanged."""
    out = []
    for p in pairs:
        choices = found.get(query_key(p.query))
        if not choices:
            out.append(p)
            continue
        pick = choices[zlib.crc32((p.query + "\x00" + p.skill).encode("utf-8", "surrogatepass"))
                       % len(choices)]
        out.append(Pair(p.query, p.document, p.skill, embedding_text(skills[pick]),
                        skills[pick].key))
    return out
