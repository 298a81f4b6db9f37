"""What every encoder backend promises (``router.encoders.base.Embedder``), as one test base.

A backend's tests subclass :class:`EncoderContract` (named ``Test...``), set ``model_id``,
``dimension`` and ``batch_cosine``, and give the ``embedder`` fixture; the base's tests then run
against it: the model id and dimension it reports, L2-normalised float32 rows, the same vector
for the same text, and a batch that matches encoding one text at a time.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from router.encoders.base import Embedder

TEXTS = (
    "Convert this PDF to markdown.",
    "résumé naïve café: unicode too",
    "Find me a flight from Paris to Berlin next Tuesday. Then book a hotel near the station.",
    "deploy a Kubernetes service",
    "word " * 400,  # longer than a real model's maximum length: truncated the same way each time
    "summarise the quarterly invoices before release 3",
)


class EncoderContract:
    """The tests every encoder backend passes; a subclass per backend gives ``embedder``."""

    model_id: ClassVar[str]
    dimension: ClassVar[int]
    # the least cosine between a text's row in a batch and its row encoded alone (1.0 up to
    # rounding for a float32 model; an int8 copy shares one activation scale across a batch)
    batch_cosine: ClassVar[float] = 0.9999

    @pytest.fixture
    def embedder(self) -> Embedder:
        raise NotImplementedError("a backend's contract test gives its embedder")

    def test_it_names_its_model_and_dimension(self, embedder: Embedder) -> None:
        assert embedder.model_id == self.model_id
        assert embedder.dimension == self.dimension

    def test_rows_are_normalised_float32(self, embedder: Embedder) -> None:
        rows = embedder.encode(list(TEXTS))
        assert isinstance(rows, np.ndarray) and rows.dtype == np.float32
        assert rows.shape == (len(TEXTS), self.dimension)
        assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)

    def test_the_same_text_gives_the_same_vector(self, embedder: Embedder) -> None:
        first = embedder.encode([TEXTS[0], TEXTS[2]])
        again = embedder.encode([TEXTS[0], TEXTS[2]])
        assert np.allclose(first, again, atol=1e-6)
        assert not np.allclose(first[0], first[1], atol=1e-3)  # and another text another one

    def test_a_batch_matches_one_text_at_a_time(self, embedder: Embedder) -> None:
        batched = embedder.encode(list(TEXTS))
        single = np.vstack([embedder.encode([text]) for text in TEXTS])
        assert float((batched * single).sum(axis=1).min()) >= self.batch_cosine

    def test_no_text_gives_no_row(self, embedder: Embedder) -> None:
        assert embedder.encode([]).shape == (0, self.dimension)
