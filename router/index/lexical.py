"""BM25 keyword index over skill names, descriptions and the start of their bodies (bm25s's
scores; the body excerpt: ``router.index.body``).

Text is lower-cased and split into word tokens of two or more characters (camelCase and
snake_case identifiers are split into words); English stopwords are removed. Every word is
indexed twice: as written and as its English stem (marked with ``~``). Exact words therefore
score higher than mere morphological variants, while "invoices" still finds "invoice".
Measured on the Seal-Tools dev set (4,076 skills, 1,354 requests), this scores recall@5
0.776 / MRR@10 0.915, against 0.773 / 0.909 for unstemmed words and 0.754 / 0.908 for stems only
(name words repeated twice: 0.769 / 0.911; no stopword removal: 0.714 / 0.882). Scoring is
bm25s's Lucene BM25 with k1 1.5, b 0.75: other k1 / b values and BM25 variants moved recall@5
by at most 0.013. 100,000 synthetic skills build in about 19 s; a request takes 0.2-1.4 ms (p95).

The score matrix is the one bm25s's ``BM25.index`` computes, value for value, made with numpy
from each document's term counts (``router.common.bm25_matrix``); the saved files
(``lexical.json`` with the stopword list the index was built with, ``vocab.json``, and the score
matrix as ``data.npy``, ``indices.npy`` and ``indptr.npy``) are this module's own and load with
numpy alone (see ``LexicalIndex``). A build keeps each document's term counts for the next
build of the process, so a Reindex after one skill changed counts that skill's words alone.
Searching is thread-safe: the score matrix is only read, and each thread keeps its own stemmer
(PyStemmer objects must not be shared between threads)."""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from collections.abc import Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from router.common.bm25_matrix import (
    Counted,
    column_sums,
    count_terms,
    english_stopwords,
    score_matrix,
)
from router.common.memo import Memo
from router.common.workers import Workers

log = logging.getLogger(__name__)

TOKENIZER_VERSION = 1
FORMAT = 2  # 1: bm25s's own files
_SETTINGS_FILE = "lexical.json"
_VOCAB_FILE = "vocab.json"
_WORD = re.compile(r"[^\W_]{2,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STEM_MARK = "~"
_local = threading.local()


def skill_document(name: str, description: str, body: str = "") -> str:
    """The text indexed for one skill: its name split on hyphens, then its description, then
    ``body``, the excerpt of its instructions indexed with it (``router.index.body``)."""
    words = name.replace("-", " ").replace("_", " ").strip()
    return " ".join(part for part in (words, description.strip(), body.strip()) if part)


def _stemmer() -> Any:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        _local.stemmer = stemmer
    return stemmer


def words_and_stems(text: str, stopwords: frozenset[str]) -> tuple[list[str], list[str]]:
    """The words of ``text`` (``stopwords`` removed) and their English stems, in order."""
    words = [w for w in _WORD.findall(_CAMEL.sub(" ", text).lower()) if w not in stopwords]
    stems: list[str] = _stemmer().stemWords(words)
    return words, stems


def tokenize(text: str, stopwords: frozenset[str]) -> list[str]:
    """Words (``stopwords`` removed) followed by their ``~``-marked English stems."""
    words, stems = words_and_stems(text, stopwords)
    return words + [_STEM_MARK + s for s in stems]


@lru_cache(maxsize=8192)
def term_counts(doc: str, stopwords: frozenset[str]) -> tuple[dict[str, int], int]:
    """Each word of ``doc`` with its count, and the number of words (cached: the project
    skills of a conversation come back on every turn)."""
    words = tokenize(doc, stopwords)
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return counts, len(words)


def _count_all(docs: list[str], stopwords: frozenset[str]) -> list[Counted]:
    return [count_terms(tokenize(doc, stopwords)) for doc in docs]


def _interned(counted: Counted) -> Counted:
    return Counted(tuple(map(sys.intern, counted.terms)), counted.counts, counted.length)


# a document's counted terms (one stopword list), kept: a document split before is not split
# again, and a build that follows another counts only the documents that changed
_COUNTED: Memo[str, Counted] = Memo()


class LexicalIndex:
    """An immutable BM25 index; row ``i`` is the ``i``-th document given to :meth:`build`.

    The BM25 score of every (term, document) pair is computed at build time as bm25s computes
    it (``router.common.bm25_matrix``), as a sparse term-by-document matrix in CSC form
    (``data``, ``indices``, ``indptr``). That matrix and the vocabulary are all a search needs:
    a query's scores are the sum of its terms' columns, the same sum bm25s's ``get_scores``
    makes (term by term, in float32). They are saved in this module's own files, so loading an
    index needs numpy only: importing bm25s also imports scipy, about 0.3 s of a server's
    start-up.
    """

    def __init__(self, vocab: dict[str, int], data: np.ndarray, indices: np.ndarray,
                 indptr: np.ndarray, size: int, stopwords: frozenset[str]) -> None:
        if max(vocab.values(), default=-1) >= len(indptr) - 1 or len(data) != len(indices) \
                or (len(indptr) and int(indptr[-1]) != len(data)) \
                or (len(indices) and not 0 <= int(indices.min()) <= int(indices.max()) < size):
            raise ValueError("inconsistent lexical index arrays")
        self._vocab = vocab
        self._data = data
        self._indices = indices
        self._indptr = indptr
        self._size = size
        self._stopwords = stopwords

    @classmethod
    def empty(cls) -> LexicalIndex:
        return cls({}, np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(1, np.int64), 0,
                   frozenset())

    @classmethod
    def build(cls, docs: Sequence[str], workers: Workers | None = None) -> LexicalIndex:
        """Index ``docs`` (typically :func:`skill_document` texts). An empty list is allowed.
        Many documents are split into words over ``workers`` (the same words, in order)."""
        if not docs:
            return cls.empty()
        stopwords = english_stopwords()
        count = partial(_count_all, stopwords=stopwords)
        counted = _COUNTED.many(docs, lambda todo: [_interned(c) for c in (
            workers.map(count, todo) if workers is not None else count(todo))])
        matrix = score_matrix(counted)
        return cls(matrix.vocab, matrix.data, matrix.indices, matrix.indptr, len(docs),
                   stopwords)

    def __len__(self) -> int:
        return self._size

    def _all_scores(self, query: str) -> np.ndarray | None:
        ids = [self._vocab[t] for t in tokenize(query, self._stopwords) if t in self._vocab]
        if not ids:
            return None
        return column_sums(self._data, self._indices, self._indptr, self._size, ids)

    def terms(self, text: str) -> frozenset[str]:
        """The terms ``text`` is indexed as here (this index's stopwords removed)."""
        return frozenset(tokenize(text, self._stopwords))

    def words(self, text: str) -> list[tuple[str, str]]:
        """Each word of ``text`` this index reads (its stopwords removed), with its stem's term
        (``rows_holding`` looks either up)."""
        words, stems = words_and_stems(text, self._stopwords)
        return [(w, _STEM_MARK + s) for w, s in zip(words, stems, strict=True)]

    def rows_holding(self, term: str) -> np.ndarray:
        """The documents that hold ``term`` (a word, or a ``~``-marked stem): its postings, none
        for a term not indexed."""
        column = self._vocab.get(term)
        if column is None:
            return self._indices[:0]
        return self._indices[self._indptr[column]:self._indptr[column + 1]]

    def search(self, query: str, k: int,
               within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` documents with a positive score, best first (ties: lower id first);
        ``within`` (sorted ids): only those documents. Returns ``(ids int64, scores float32)``;
        both are empty when no query word is indexed."""
        scores = self._all_scores(query)
        if scores is None or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        positive = within[scores[within] > 0] if within is not None \
            else np.flatnonzero(scores > 0)
        if len(positive) > k:
            part = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[part]
        order = np.lexsort((positive, -scores[positive]))
        ids = positive[order].astype(np.int64)
        return ids, scores[ids]

    def score_texts(self, query: str, docs: Sequence[str],
                    within: np.ndarray | None = None) -> np.ndarray:
        """BM25 of documents outside the index (a turn's project skills) for ``query``, with
        the term statistics of the index's documents ``within`` (sorted ids; None: all): each
        word's document frequency among them and their count, so a word of documents outside
        ``within`` scores as one of none (Lucene's BM25, k1 1.5, b 0.75); the length norm takes
        the mean length of ``docs`` (the index keeps none). A document's words are counted once
        per process and text (``term_counts``)."""
        out = np.zeros(len(docs), dtype=np.float32)
        terms = set(tokenize(query, self._stopwords))
        if not docs or not terms:
            return out
        counted = [term_counts(d, self._stopwords) for d in docs]
        mean = max(sum(length for _, length in counted) / len(counted), 1.0)
        size = self._size if within is None else len(within)
        for term in terms:
            df = self._frequency(term, within)
            idf = float(np.log(1.0 + (size - df + 0.5) / (df + 0.5)))
            for i, (counts, length) in enumerate(counted):
                tf = counts.get(term, 0)
                if tf:
                    out[i] += idf * tf / (tf + 1.5 * (0.25 + 0.75 * length / mean))
        return out

    def _frequency(self, term: str, within: np.ndarray | None) -> int:
        """How many documents (of ``within``, sorted ids, when given) hold ``term``."""
        rows = self.rows_holding(term)
        if within is None:
            return len(rows)
        at = np.minimum(np.searchsorted(within, rows), max(len(within) - 1, 0))
        return int(np.count_nonzero(within[at] == rows)) if len(within) else 0

    def scores_for(self, query: str, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """BM25 scores of the given documents for ``query`` (0 where nothing matches)."""
        index = np.asarray(ids, dtype=np.int64)
        scores = self._all_scores(query)
        if scores is None:
            return np.zeros(len(index), dtype=np.float32)
        return scores[index]

    def best_by_group(self, query: str, group: np.ndarray, groups: int) -> np.ndarray:
        """Per group of documents (``group[i]``: document i's, of ``groups``), the best BM25
        score for ``query`` (0 where no document of it matches)."""
        out = np.zeros(groups, dtype=np.float32)
        scores = self._all_scores(query)
        if scores is not None:
            hit = np.flatnonzero(scores > 0)  # a query's words reach few of many documents
            np.maximum.at(out, group[hit], scores[hit])
        return out

    def save(self, directory: Path) -> None:
        """Write the index into ``directory`` (created if missing)."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, array in (("data", self._data), ("indices", self._indices),
                            ("indptr", self._indptr)):
            np.save(directory / f"{name}.npy", array, allow_pickle=False)
        (directory / _VOCAB_FILE).write_text(json.dumps(self._vocab, ensure_ascii=False),
                                             encoding="utf-8")
        settings = {"format": FORMAT, "tokenizer_version": TOKENIZER_VERSION,
                    "documents": self._size, "stopwords": sorted(self._stopwords)}
        (directory / _SETTINGS_FILE).write_text(json.dumps(settings), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex:
        """Read an index written by :meth:`save`.

        Raises ``ValueError`` when the files were written by an incompatible tokenizer or
        format, or do not fit together, and ``OSError`` when they are missing.
        """
        settings = json.loads((directory / _SETTINGS_FILE).read_text(encoding="utf-8"))
        if settings.get("tokenizer_version") != TOKENIZER_VERSION:
            raise ValueError(f"lexical index in {directory} uses tokenizer version "
                             f"{settings.get('tokenizer_version')}, expected {TOKENIZER_VERSION}")
        if settings.get("format") != FORMAT:
            raise ValueError(f"lexical index in {directory} has format "
                             f"{settings.get('format')}, expected {FORMAT}; rebuild the index")
        vocab = json.loads((directory / _VOCAB_FILE).read_text(encoding="utf-8"))
        data, indices, indptr = (np.load(directory / f"{name}.npy", allow_pickle=False)
                                 for name in ("data", "indices", "indptr"))
        return cls(vocab, data, indices, indptr, int(settings["documents"]),
                   frozenset(settings["stopwords"]))
