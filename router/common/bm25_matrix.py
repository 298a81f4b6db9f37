"""The BM25 score matrix of a corpus, made from each document's term counts with numpy (pure).

This is bm25s's Lucene BM25 (k1 1.5, b 0.75) as its ``BM25.index`` computes it, value for value
and in the same layout: a term-by-document matrix in CSC form (``data`` float32, ``indices``
int32 document ids, ``indptr`` int64), each term's documents in increasing order. The idf is
``log(1 + (N - df + 0.5) / (df + 0.5))`` rounded to float32; the term-frequency part
``tf / (k1 (1 - b + b |d| / avgdl) + tf)`` is taken in float64, multiplied by that idf and
rounded to float32, as bm25s does. Terms are numbered in order of first use (the first document
that holds a term, then its place there), so the numbering is the same in every process.

A document is given as ``Counted`` (its distinct terms in order of first use, their counts and
its length), which a caller keeps per text: a build that follows another counts only the
documents that changed, and the matrix itself is a few array operations (bm25s's own build
walks every document in Python)."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, count

import numpy as np

K1 = 1.5
B = 0.75


def english_stopwords() -> frozenset[str]:
    """bm25s's English stopword list, the one every BM25 here drops. Importing bm25s sets its
    own logger to DEBUG; that is undone, so the application's logging decides what is shown."""
    from bm25s.stopwords import STOPWORDS_EN

    logging.getLogger("bm25s").setLevel(logging.NOTSET)
    return frozenset(STOPWORDS_EN)


@dataclass(frozen=True)
class Counted:
    """One document: its distinct terms in order of first use, how often each occurs
    (float32, read-only) and its number of terms."""

    terms: tuple[str, ...]
    counts: np.ndarray
    length: int


def count_terms(tokens: Sequence[str]) -> Counted:
    """``tokens`` (one document's, in order) counted."""
    counted = Counter(tokens)  # keys in order of first use
    counts = np.fromiter(counted.values(), dtype=np.float32, count=len(counted))
    counts.flags.writeable = False
    return Counted(tuple(counted), counts, len(tokens))


@dataclass(frozen=True)
class Matrix:
    """A corpus's BM25 scores: ``vocab`` (term -> column, in order of first use) and the
    term-by-document CSC arrays over ``size`` documents."""

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    size: int

    def scores(self, columns: Sequence[int]) -> np.ndarray:
        """Every document's score for a query of these term columns (``column_sums``)."""
        return column_sums(self.data, self.indices, self.indptr, self.size, columns)


def column_sums(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, size: int,
                columns: Sequence[int]) -> np.ndarray:
    """Each of ``size`` documents' score for a query of these term columns of a CSC score
    matrix (a column given twice counts twice), summed in float32 term by term as bm25s's
    ``get_scores`` sums them."""
    out = np.zeros(size, dtype=np.float32)
    for column in columns:
        start, end = indptr[column], indptr[column + 1]
        out[indices[start:end]] += data[start:end]  # a term's documents differ
    return out


def score_matrix(docs: Sequence[Counted], k1: float = K1, b: float = B) -> Matrix:
    """The BM25 matrix of ``docs`` (see the module notes)."""
    names = list(chain.from_iterable(d.terms for d in docs))
    vocab = dict(zip(dict.fromkeys(names), count()))
    if not vocab:
        return Matrix(vocab, np.zeros(0, np.float32), np.zeros(0, np.int32),
                      np.zeros(1, np.int64), len(docs))
    term = np.fromiter(map(vocab.__getitem__, names), dtype=np.int64, count=len(names))
    tf = np.concatenate([d.counts for d in docs]).astype(np.float64)
    distinct = np.fromiter((len(d.terms) for d in docs), dtype=np.int64, count=len(docs))
    doc = np.repeat(np.arange(len(docs), dtype=np.int32), distinct)
    lengths = np.array([d.length for d in docs])
    mean = lengths.mean()  # as bm25s: numpy's mean of the lengths
    frequency = np.bincount(term, minlength=len(vocab))
    idf = _idf(frequency, len(docs))
    norm = k1 * ((1 - b) + b * lengths.astype(np.float64)[doc] / mean)
    score = (idf[term].astype(np.float64) * (tf / (norm + tf))).astype(np.float32)
    order = _stable_order(term)  # (term, document): documents come in order
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(frequency, out=indptr[1:])
    return Matrix(vocab, score[order], doc[order], indptr, len(docs))


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for non-negative keys below 2**32, as numpy's radix
    sort of 16-bit keys (one pass, or two: the low half, then the high)."""
    if not len(keys) or int(keys.max()) < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]


def _idf(frequency: np.ndarray, size: int) -> np.ndarray:
    """Each term's idf in float32, computed as bm25s does (``math.log``, once per distinct
    document frequency)."""
    values, at = np.unique(frequency, return_inverse=True)
    table = np.array([math.log(1 + (size - int(df) + 0.5) / (int(df) + 0.5)) for df in values],
                     dtype=np.float32)
    return table[at]
