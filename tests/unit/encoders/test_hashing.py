"""The hashing test embedder keeps the encoder contract, whichever backend is asked for."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from router.encoders import backends
from router.encoders.base import Embedder
from router.encoders.factory import make_embedder
from router.encoders.hashing import HashEmbedder
from tests.support.encoder_contract import EncoderContract


class TestHashEncoder(EncoderContract):
    model_id = "hash-64"
    dimension = 64
    batch_cosine = 1.0 - 1e-6

    @pytest.fixture(params=backends.names())
    def embedder(self, request: pytest.FixtureRequest) -> Embedder:
        made = make_embedder("hash-64", backend=request.param)
        assert isinstance(made, HashEmbedder)  # nothing loads or exports for it
        return made


class _Unnormalised(HashEmbedder):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode(texts) * 2.0


class _Drifting(HashEmbedder):
    """Each call's rows a little off the last: not the same vector for the same text."""

    def __init__(self) -> None:
        super().__init__(64)
        self._calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self._calls += 1
        rows = super().encode(texts)
        rows[:, self._calls % 64] += 0.1
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_contract_refuses_a_broken_encoder() -> None:
    contract = TestHashEncoder()
    with pytest.raises(AssertionError):
        contract.test_rows_are_normalised_float32(_Unnormalised(64))
    with pytest.raises(AssertionError):
        contract.test_the_same_text_gives_the_same_vector(_Drifting())
    with pytest.raises(AssertionError):
        contract.test_a_batch_matches_one_text_at_a_time(_Drifting())
    with pytest.raises(AssertionError):
        contract.test_it_names_its_model_and_dimension(HashEmbedder(32))
