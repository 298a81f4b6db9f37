"""Fusion's dense weight fitted without examples, from a catalog's own requests: on synthetic
catalogs where one retriever clearly finds the skills and the other mostly does not, the fit
moves the weight to the side that finds them; where neither is clearly better the default
stays; the record round-trips through the manifest."""

from __future__ import annotations

import numpy as np

from router.calibration.fusion_fit import MIN_REQUESTS, fit_without_examples
from router.calibration.fusion_terms import FusionConfig
from router.calibration.self_requests import SelfRequest
from router.calibration.settings import FittedSettings

SKILLS, DIM = 80, 48


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


class _Lexical:
    """A fake BM25: request ``i`` finds skill ``i`` at rank ``rank(i)`` among shuffled others."""

    def __init__(self, right: bool, seed: int) -> None:
        self.right, self.rng = right, np.random.default_rng(seed)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        wanted = int(query.split()[-1])
        others = [i for i in self.rng.permutation(SKILLS).tolist() if i != wanted]
        ids = [wanted, *others] if self.right else [*others[:k - 1], wanted]
        return np.asarray(ids[:k], dtype=np.int64), np.linspace(10.0, 1.0, k)[: len(ids[:k])]


def _catalog(dense_finds: bool, seed: int = 7) -> tuple[np.ndarray, list[SelfRequest],
                                                         np.ndarray]:
    rng = np.random.default_rng(seed)
    skills = _unit(rng.normal(size=(SKILLS, DIM)))
    signal = 1.0 if dense_finds else 0.05  # how much of its skill a request's vector holds
    vectors = _unit(signal * skills + 0.35 * _unit(rng.normal(size=(SKILLS, DIM))))
    requests = [SelfRequest(i, f"a request of skill {i}") for i in range(SKILLS)]
    return skills, requests, vectors


def _fit(dense_finds: bool, lexical_finds: bool) -> FittedSettings | None:
    skills, requests, vectors = _catalog(dense_finds)
    return fit_without_examples(skills, _unit(skills.mean(axis=0)), requests, vectors,
                                _Lexical(lexical_finds, 3))


def test_dense_side_wins_where_only_the_embedding_finds_the_skills() -> None:
    fitted = _fit(dense_finds=True, lexical_finds=False)
    assert fitted is not None and fitted.dense_weight > FusionConfig().dense_weight
    assert fitted.recall > fitted.default_recall and "beat the default" in fitted.reason


def test_lexical_side_wins_where_only_bm25_finds_the_skills() -> None:
    fitted = _fit(dense_finds=False, lexical_finds=True)
    assert fitted is not None and fitted.dense_weight < FusionConfig().dense_weight
    assert fitted.recall > fitted.default_recall


def test_the_default_stays_where_both_find_the_skills() -> None:
    fitted = _fit(dense_finds=True, lexical_finds=True)
    assert fitted is not None and fitted.dense_weight == FusionConfig().dense_weight
    assert fitted.held_out == SKILLS and fitted.recall == 1.0


def test_too_few_requests_keep_the_defaults() -> None:
    skills, requests, vectors = _catalog(True)
    few = MIN_REQUESTS - 1
    assert fit_without_examples(skills, skills.mean(axis=0), requests[:few], vectors[:few],
                                _Lexical(False, 3)) is None


def test_the_fitted_weight_round_trips_through_the_manifest() -> None:
    fitted = _fit(dense_finds=False, lexical_finds=True)
    assert fitted is not None
    again = FittedSettings.from_dict(fitted.to_dict())
    assert again is not None
    assert (again.dense_weight, again.held_out, again.reason) == (
        fitted.dense_weight, fitted.held_out, fitted.reason)
