"""The BM25 matrix made from term counts is the one bm25s's own build makes, bit for bit: the
vocabulary's order, the CSC arrays and their dtypes, and a query's scores; the hub measure's
BM25 too."""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest
from bm25s.stopwords import STOPWORDS_EN

from router.admission.fused import bm25_scores
from router.common.bm25_matrix import count_terms, score_matrix

WORDS = [f"w{i}" for i in range(400)]


def _corpus(rng: random.Random) -> list[list[str]]:
    """Documents of skewed words (some terms in most documents, most in few), some empty."""
    return [[rng.choice(WORDS[:rng.randint(1, len(WORDS))]) for _ in range(rng.randint(0, 50))]
            for _ in range(rng.randint(1, 200))]


def _bm25s_index(docs: list[list[str]]) -> tuple[dict[str, int], object]:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(term, len(vocab)) for term in doc] for doc in docs]
    reference = bm25s.BM25()
    reference.index((ids, dict(vocab)), show_progress=False)
    return vocab, reference


@pytest.mark.parametrize("seed", range(12))
def test_the_matrix_is_the_one_bm25s_builds(seed: int) -> None:
    rng = random.Random(seed)
    docs = _corpus(rng)
    if not any(docs):
        docs.append(["w1"])
    vocab, reference = _bm25s_index(docs)
    made = score_matrix([count_terms(doc) for doc in docs])
    expected = reference.scores  # type: ignore[attr-defined]
    assert list(made.vocab.items()) == list(vocab.items())  # numbered in order of first use
    for name in ("data", "indices", "indptr"):
        got, want = getattr(made, name), expected[name]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name
    for _ in range(5):
        query = [rng.randrange(len(vocab)) for _ in range(rng.randint(1, 4))]
        want = reference.get_scores(query)  # type: ignore[attr-defined]
        assert made.scores(query).tobytes() == want.tobytes()


def test_no_terms_make_an_empty_matrix() -> None:
    made = score_matrix([count_terms([]), count_terms([])])
    assert made.vocab == {} and made.size == 2 and made.indptr.tolist() == [0]
    assert made.scores([]).tolist() == [0.0, 0.0]


def test_the_hub_measure_scores_as_bm25s() -> None:
    documents = ["pdf extract Extracts text and tables from PDF files.",
                 "send email Sends an email to one or more recipients.",
                 "weather forecast Gets the weather forecast for a city, and more weather.",
                 "the and of"]
    requests = ["email the weather", "tables in pdf files", "nothing matches", "the"]
    got = bm25_scores(documents, requests)
    stop = frozenset(STOPWORDS_EN)

    def words(text: str) -> list[str]:
        import re

        return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in stop]

    vocab, reference = _bm25s_index([words(d) for d in documents])
    for row, request in enumerate(requests):
        terms = [vocab[w] for w in words(request) if w in vocab]
        want = reference.get_scores(terms) if terms \
            else np.zeros(len(documents), np.float32)  # type: ignore[attr-defined]
        assert got[row].tobytes() == np.asarray(want, np.float32).tobytes(), request
    assert got[0, 1] > 0 and got[0, 2] > got[0, 0] == 0 and not got[2].any()


@pytest.mark.parametrize("top", [7, 1 << 16, 1 << 20])
def test_the_term_order_is_a_stable_sort_at_any_vocabulary_size(top: int) -> None:
    from router.common.bm25_matrix import _stable_order

    keys = np.random.default_rng(top).integers(0, top, 50_000).astype(np.int64)
    assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
