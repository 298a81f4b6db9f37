"""The scores the hub measure ranks by (pure but for the encoder it is given): dense cosine
and BM25 over each skill's name and description, fused by reciprocal rank as retrieval fuses
them, so a description stuffed with keywords and one tuned to embed near everything both
show."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Sequence

import numpy as np

from router.common.memo import Memo

RRF_K = 60  # the usual reciprocal-rank constant
_WORD = re.compile(r"[a-z0-9]+")
_WORDS: Memo[str, tuple[str, ...]] = Memo()  # a document's words (kept between builds)

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
    fused += np.where(lexical > 0, _rrf(lexical), 0.0)
    return fused


def bm25_scores(documents: Sequence[str], requests: Sequence[str]) -> np.ndarray:
    """requests x documents BM25 scores (bm25s, English stopwords dropped)."""
    import bm25s
    from bm25s.stopwords import STOPWORDS_EN

    # bm25s sets its own logger to DEBUG when imported: the application's logging decides
    logging.getLogger("bm25s").setLevel(logging.NOTSET)

    stop = frozenset(STOPWORDS_EN)

    def words(text: str) -> tuple[str, ...]:
        return tuple(sys.intern(w) for w in _WORD.findall(text.lower()) if w not in stop)

    out = np.zeros((len(requests), len(documents)), dtype=np.float32)
    vocab: dict[str, int] = {}
    split = _WORDS.many(documents, lambda todo: [words(d) for d in todo])
    ids = [[vocab.setdefault(w, len(vocab)) for w in doc] for doc in split]
    if not vocab:
        return out
    bm25 = bm25s.BM25()
    bm25.index((ids, vocab), show_progress=False)
    for row, request in enumerate(requests):
        terms = [vocab[w] for w in words(request) if w in vocab]
        if terms:
            out[row] = bm25.get_scores(terms)
    return out


def _rrf(scores: np.ndarray) -> np.ndarray:
    ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1)
    return 1.0 / (RRF_K + 1.0 + ranks)
