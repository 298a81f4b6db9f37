"""The scores the hub measure ranks by (pure but for the encoder it is given): dense cosine
and BM25 over each skill's name and description, fused by reciprocal rank as retrieval fuses
them, so a description stuffed with keywords and one tuned to embed near everything both
show."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence

import numpy as np

from router.common.bm25_matrix import Counted, count_terms, english_stopwords, score_matrix
from router.common.memo import Memo

RRF_K = 60  # the usual reciprocal-rank constant
_WORD = re.compile(r"[a-z0-9]+")
_COUNTED: Memo[str, Counted] = Memo()  # a document's words, counted (kept between builds)

Encode = Callable[[Sequence[str]], np.ndarray]  # texts -> L2-normalised rows


def fused_scores(documents: Sequence[str], requests: Sequence[str], encode: Encode,
                 vectors: np.ndarray | None = None) -> np.ndarray:
    """requests x documents: the reciprocal-rank fusion of dense and BM25 scores (a
    document no request word reaches has no BM25 term); ``vectors``, the documents'
    embeddings when already made (else ``encode`` makes them)."""
    rows = vectors if vectors is not None else encode(list(documents))
    dense = encode(list(requests)) @ np.asarray(rows).T
    lexical = bm25_scores(documents, requests)
    fused = _rrf(dense)
    fused += _rrf_positive(lexical)
    return fused


def bm25_scores(documents: Sequence[str], requests: Sequence[str]) -> np.ndarray:
    """requests x documents BM25 scores (bm25s's Lucene BM25, made by
    ``router.common.bm25_matrix``; English stopwords dropped)."""
    stop = english_stopwords()

    def words(text: str) -> tuple[str, ...]:
        return tuple(sys.intern(w) for w in _WORD.findall(text.lower()) if w not in stop)

    out = np.zeros((len(requests), len(documents)), dtype=np.float32)
    matrix = score_matrix(_COUNTED.many(documents, lambda todo: [
        count_terms(words(d)) for d in todo]))
    if not matrix.vocab:
        return out
    for row, request in enumerate(requests):
        terms = [matrix.vocab[w] for w in words(request) if w in matrix.vocab]
        if terms:
            out[row] = matrix.scores(terms)
    return out


def _rrf(scores: np.ndarray) -> np.ndarray:
    """Each score's reciprocal rank in its row (ties: the lower column first)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)  # the inverse permutation: argsort of ``order``, made directly
    np.put_along_axis(ranks, order, np.arange(scores.shape[1])[None, :], axis=1)
    return 1.0 / (RRF_K + 1.0 + ranks)


def _rrf_positive(scores: np.ndarray) -> np.ndarray:
    """``_rrf`` where a score is positive, 0 elsewhere: a positive score's rank counts only
    the positive scores of its row (every higher one, and equal ones in lower columns), so
    each row ranks its few positive scores alone."""
    out = np.zeros(scores.shape, dtype=np.float64)
    for row, values in enumerate(scores):
        hit = np.flatnonzero(values > 0)
        order = hit[np.argsort(-values[hit], kind="stable")]
        out[row, order] = 1.0 / (RRF_K + 1.0 + np.arange(len(order)))
    return out
