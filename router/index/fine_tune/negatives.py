"""Hard negatives for encoder fine-tuning, mined from the catalog: for each training request,
the closest wrong skill by the base encoder (cosine to the skill's embedded text) and by BM25
(over the skill's name words and description, as the lexical index), never one of the skills
the request's examples name. Each pair of the request takes one of them (by a hash of request
and skill, so the same inputs give the same pairs) as an explicit negative column of
``MultipleNegativesRankingLoss`` (``router.encoders.training``).

``index.hard_negatives``: ``off`` (the default) never mines; ``auto`` trains a second run with
the mined negatives only when the pair bound leaves room for both runs (twice the training
pairs at most the bound; always on a GPU); ``always`` trains both whatever the bound (on a CPU
about 2.5x the training time of one run). The run with mined negatives is kept only when its
held-out figure is higher (``prefer``); the adoption rule against the base model is then the
same as for one run (``judge.judge``).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from router.config import HARD_NEGATIVE_MODES
from router.encoders.base import Embedder
from router.encoders.training import Pair, Trained
from router.errors import InvalidRequest
from router.examples.model import query_key
from router.index.lexical import LexicalIndex, skill_document
from router.index.vectors import embed_skills, embedding_text
from router.skills.model import Skill

log = logging.getLogger(__name__)

MODES = HARD_NEGATIVE_MODES
RECORD = "hard_negatives"  # the key inside the manifest's ``fine_tune`` entry


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidRequest(f"hard_negatives must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def hashed(settings: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The fine-tune hash's settings: the mode joins them unless off (old hashes unchanged)."""
    return {**settings, **({} if mode == "off" else {RECORD: mode})}


def room(mode: str, pairs: int, bound: int | None) -> tuple[bool, str]:
    """Whether a build trains the second run, and why (or why not)."""
    if mode == "off":
        return False, "off"
    if mode == "always":
        return True, "always: both runs whatever the pair bound"
    if bound is None:
        return True, "no pair bound on this device: room for both runs"
    if 2 * pairs <= bound:
        return True, f"room for both runs: 2 x {pairs} pairs within the bound of {bound}"
    return False, f"no room for a second run: 2 x {pairs} pairs over the bound of {bound}"


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
    right: dict[str, set[int]] = {}
    for p in every:
        right.setdefault(query_key(p.query), set()).add(positions[p.skill])
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
    documents = [embedding_text(s) for s in skills]
    out = []
    for p in pairs:
        choices = found[query_key(p.query)]
        pick = choices[zlib.crc32((p.query + "\x00" + p.skill).encode("utf-8", "surrogatepass"))
                       % len(choices)]
        out.append(Pair(p.query, p.document, p.skill, documents[pick], skills[pick].key))
    log.info("mined hard negatives for %d training requests (%d pairs)", len(found), len(out))
    return out


def prefer(plain: Mapping[str, Any], mined: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the run with mined negatives is kept: only when its held-out figure (the tuned
    model's recall@5, then its MRR@10) is higher than the plain run's; a tie keeps the plain
    run."""
    first = (float(plain["tuned_recall_at_5"]), float(plain["tuned_mrr_at_10"]))
    second = (float(mined["tuned_recall_at_5"]), float(mined["tuned_mrr_at_10"]))
    shown = (f"held-out recall@5 / MRR@10 {second[0]:.3f} / {second[1]:.3f} with mined "
             f"negatives, {first[0]:.3f} / {first[1]:.3f} without")
    if second > first:
        return True, f"mined hard negatives won: {shown}"
    return False, f"mined hard negatives did not win: {shown}"


def summary(mode: str, why: str, runs: Sequence[Trained],
            figures: Sequence[Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The run kept (0: without mined negatives, 1: with) and the ``fine_tune`` entry's
    ``hard_negatives`` record ({} when off): tried, won, why, and both runs' held-out figures
    and steps when both ran."""
    if mode == "off":
        return 0, {}
    record: dict[str, Any] = {"mode": mode, "tried": len(runs) > 1, "won": False, "why": why}
    if len(runs) < 2:
        return 0, {RECORD: record}
    won, because = prefer(figures[0], figures[1])
    record.update(won=won, why=f"{why}; {because}", plain_held_out=dict(figures[0]),
                  mined_held_out=dict(figures[1]), plain_steps=runs[0].steps,
                  mined_steps=runs[1].steps, plain_train_seconds=round(runs[0].seconds, 1),
                  mined_train_seconds=round(runs[1].seconds, 1))
    return int(won), {RECORD: record}
