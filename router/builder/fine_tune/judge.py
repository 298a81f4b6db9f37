"""The judging half of encoder fine-tuning: the training pairs, the held-out fold, the
fine-tune hash, the held-out scores and the adoption rule (pure, numpy only), and ``compare``,
which embeds the catalog and the held-out requests with two encoders to judge them (no torch
here: the encoders are handed in)."""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from router.encoders.base import Embedder
from router.encoders.training import Pair
from router.examples import selection
from router.examples.model import Example, query_key
from router.index.vectors import embed_skills, embedding_text, previous_vectors, text_key
from router.skills.model import Skill

log = logging.getLogger(__name__)

FOLDS = 5  # one request in five (by its hashed text) is held out to judge the tuned model
TOP = 5  # recall@5
DEPTH = 10  # MRR@10
SIGMAS = 2.0  # the tuned model must win on this many sigmas more held-out requests than it loses


def fold_of(query: str) -> int:
    """The fold of a request (by its normalised text, so repeats share a fold)."""
    return zlib.crc32(query_key(query).encode("utf-8")) % FOLDS


def training_pairs(skills: Sequence[Skill], examples: Sequence[Example]) -> list[Pair]:
    """(request -> the skill's embedded text) for every positive example row a build keeps
    (``router.examples.selection``): should-not-trigger and off-topic requests make no pair."""
    by_name = {s.key: s for s in skills}
    rows = selection.select(examples, set(by_name)).rows
    return [Pair(r.query, embedding_text(by_name[r.skill]), r.skill) for r in rows
            if not r.negative]


def split(pairs: Sequence[Pair], max_pairs: int | None) -> tuple[list[Pair], list[Pair]]:
    """(training pairs, held-out pairs): fold 0 is held out; at most ``max_pairs`` train (None:
    all), a fixed hash-ordered sample when there are more."""
    held = [p for p in pairs if fold_of(p.query) == 0]
    return sample([p for p in pairs if fold_of(p.query) != 0], max_pairs), held


def sample(pairs: Sequence[Pair], max_pairs: int | None) -> list[Pair]:
    """``pairs`` when at most ``max_pairs`` (None: no bound), else a fixed sample of that many
    (ordered by a hash of request and skill: the same pairs on any machine)."""
    if max_pairs is None or len(pairs) <= max_pairs:
        return list(pairs)
    ordered = sorted(pairs, key=lambda p: (_crc(p.query + "\x00" + p.skill), p.query, p.skill))
    return ordered[:max_pairs]


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def fine_tune_hash(base: str, pairs: Sequence[Pair], held: Sequence[Pair],
                   settings: Mapping[str, object], runs: Sequence[Sequence[Pair]] = ()) -> str:
    """SHA-256 of what the tuned model depends on: the base model, the training pairs (with
    the document text), the held-out requests, the hyper-parameters, and the pairs of each
    candidate run tried (with their negatives' texts; none: the hash of before)."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"base": base, "settings": settings}, sort_keys=True).encode())
    for group in (pairs, held, *runs):
        digest.update(b"\x01")
        for p in sorted(group, key=lambda p: (p.query, p.skill)):
            mined = (p.negative_skill, p.negative) if p.negative else ()
            digest.update("\x00".join((p.query, p.skill, p.document, *mined)).encode(
                "utf-8", "surrogatepass") + b"\x02")
    return digest.hexdigest()


@dataclass(frozen=True)
class HeldOut:
    """Held-out requests: their text and the catalog positions of the skills they expect."""

    queries: tuple[str, ...]
    expected: tuple[frozenset[int], ...]


def held_out(pairs: Sequence[Pair], positions: Mapping[str, int]) -> HeldOut:
    groups: dict[str, tuple[str, set[int]]] = {}
    for p in pairs:
        groups.setdefault(query_key(p.query), (p.query, set()))[1].add(positions[p.skill])
    ordered = sorted(groups.values(), key=lambda g: g[0])
    return HeldOut(tuple(g[0] for g in ordered), tuple(frozenset(g[1]) for g in ordered))


def scores(skill_vectors: np.ndarray, query_vectors: np.ndarray,
           expected: Sequence[frozenset[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Dense-only recall@5 and reciprocal rank (within the top 10) per request."""
    recall = np.zeros(len(expected))
    rr = np.zeros(len(expected))
    if not len(expected):
        return recall, rr
    sims = np.asarray(query_vectors, dtype=np.float32) @ np.asarray(skill_vectors).T
    depth = min(DEPTH, sims.shape[1])
    top = np.argsort(-sims, axis=1, kind="stable")[:, :depth]
    for i, want in enumerate(expected):
        ranked = top[i].tolist()
        recall[i] = len(want & set(ranked[:TOP])) / len(want)
        hit = next((r for r, pos in enumerate(ranked) if pos in want), None)
        rr[i] = 1.0 / (hit + 1) if hit is not None else 0.0
    return recall, rr


@dataclass(frozen=True)
class Verdict:
    adopt: bool
    why: str
    wins: int = 0
    losses: int = 0


def judge(base: tuple[np.ndarray, np.ndarray], tuned: tuple[np.ndarray, np.ndarray],
          sigmas: float = SIGMAS) -> Verdict:
    """Adopt the tuned model only when, request by request (recall@5, then reciprocal rank),
    it wins on clearly more held-out requests than it loses (a sign test at ``sigmas``) and
    its mean recall@5 is not lower."""
    diff = np.where(np.round(tuned[0] - base[0], 9) != 0, tuned[0] - base[0], tuned[1] - base[1])
    diff = np.round(diff, 9)
    wins, losses = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    clear = wins - losses > sigmas * np.sqrt(wins + losses) and wins > 0
    if clear and float(tuned[0].mean()) >= float(base[0].mean()):
        return Verdict(True, f"won on {wins} held-out requests, lost on {losses}", wins, losses)
    return Verdict(False, f"no clear gain on held-out requests: won {wins}, lost {losses}",
                   wins, losses)


def compare(skills: Sequence[Skill], base: Embedder, candidate: Embedder,
            held: Sequence[Pair], root: Path | None, progress: bool,
            seed: Mapping[str, np.ndarray] | None = None,
            ) -> tuple[Verdict, dict[str, Any], dict[str, np.ndarray]]:
    """Base vs tuned, dense only, on the held-out requests against the whole catalog; the
    skill embeddings made (both models) are handed back for the build to reuse; ``root``
    None takes none from the current version; ``seed``: skill embeddings already made
    (``text_key`` keyed: the base model's, by the mining of hard negatives)."""
    positions = {s.key: i for i, s in enumerate(skills)}
    requests = held_out(held, positions)
    results = []
    known: dict[str, np.ndarray] = {}
    for model in (base, candidate):
        cache = {**(seed or {}),
                 **(previous_vectors(root, model.model_id) if root is not None else {})}
        vectors, _ = embed_skills(skills, model, cache, progress)
        known.update(_keyed(skills, model.model_id, vectors))
        results.append(scores(vectors, model.encode(list(requests.queries)),
                              requests.expected))
    verdict = judge(results[0], results[1])
    figures = {"requests": len(requests.queries), "wins": verdict.wins,
               "losses": verdict.losses, "won": verdict.adopt,
               **{f"{name}_{metric}": round(float(values.mean()), 4)
                  for name, (recall, rr) in zip(("base", "tuned"), results, strict=True)
                  for metric, values in (("recall_at_5", recall), ("mrr_at_10", rr))}}
    log.info("fine-tuned encoder on %d held-out requests: recall@5 %.3f -> %.3f, MRR@10 "
             "%.3f -> %.3f", figures["requests"], figures["base_recall_at_5"],
             figures["tuned_recall_at_5"], figures["base_mrr_at_10"], figures["tuned_mrr_at_10"])
    return verdict, figures, known


def _keyed(skills: Sequence[Skill], model_id: str, vectors: np.ndarray) -> dict[str, np.ndarray]:
    return {text_key(model_id, embedding_text(s)): vectors[i] for i, s in enumerate(skills)}
