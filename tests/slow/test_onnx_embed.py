"""The ONNX query encoder against sentence-transformers on the default model (shipped in the
package)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest

from router.config import DEFAULT_MODEL
from router.encoders import int8
from router.encoders.base import Embedder
from router.encoders.factory import OnnxRun, make_embedder
from router.encoders.onnx import MODEL_FILE, QUANTIZED, OnnxEmbedder
from tests.support.encoder_contract import EncoderContract

pytest.importorskip("onnxruntime")

MODEL = DEFAULT_MODEL


def _sample() -> list[str]:
    """A fixed sample of about fifty texts: short, long, multi-sentence, over the length cap."""
    texts = [
        "hi", "Convert this PDF to markdown.", "résumé naïve café — unicode too",
        "Find me a flight from Paris to Berlin next Tuesday. Then book a hotel near the station.",
        "word " * 400,  # longer than the model's maximum length: truncated the same way
    ]
    verbs = ["summarise", "translate", "deploy", "refactor", "plot", "schedule", "audit"]
    objects = ["the quarterly invoices", "a Kubernetes service", "unit tests for the parser",
               "sales figures by region", "a meeting with the design team", "the SQL schema"]
    for i in range(45):
        texts.append(f"Please {verbs[i % len(verbs)]} {objects[(i * 5) % len(objects)]} "
                     f"before release {i}.")
    return texts


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch_module: pytest.MonkeyPatch) -> OnnxEmbedder:
    cache = tmp_path_factory.mktemp("onnx-cache")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the ONNX export tried to open a network connection")

    monkeypatch_module.setattr(socket.socket, "connect", no_network)
    monkeypatch_module.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch_module.setenv("TRANSFORMERS_OFFLINE", "1")
    embedder = make_embedder(MODEL, backend="onnx", run=OnnxRun(cache_dir=cache))
    assert isinstance(embedder, OnnxEmbedder)
    embedder.prepare()  # the export runs here, with sockets refused
    return embedder


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_export_is_cached_offline(onnx_embedder: OnnxEmbedder) -> None:
    assert (onnx_embedder.folder / MODEL_FILE).is_file()
    assert onnx_embedder.is_exported()
    assert onnx_embedder.model_id == MODEL


def test_vectors_match_sentence_transformers(onnx_embedder: OnnxEmbedder,
                                             real_embedder: Embedder) -> None:
    texts = _sample()
    expected = real_embedder.encode(texts)
    batched = onnx_embedder.encode(texts)
    single = np.vstack([onnx_embedder.encode([t]) for t in texts])
    assert batched.shape == expected.shape == (len(texts), 384)
    assert float((batched * expected).sum(axis=1).min()) >= 0.99
    assert float((single * expected).sum(axis=1).min()) >= 0.99
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


def test_same_top_hits_as_torch(onnx_embedder: OnnxEmbedder, real_embedder: Embedder) -> None:
    texts = _sample()
    queries, docs = texts[:12], texts[12:]
    torch_scores = real_embedder.encode(queries) @ real_embedder.encode(docs).T
    onnx_scores = onnx_embedder.encode(queries) @ onnx_embedder.encode(docs).T
    for a, b in zip(torch_scores, onnx_scores, strict=True):
        assert list(np.argsort(-a)[:5]) == list(np.argsort(-b)[:5])


def test_empty_input(onnx_embedder: OnnxEmbedder) -> None:
    assert onnx_embedder.encode([]).shape == (0, 384)


def test_a_damaged_export_is_refused_and_exported_again(
        onnx_embedder: OnnxEmbedder, caplog: pytest.LogCaptureFixture) -> None:
    texts = _sample()[:8]
    expected = onnx_embedder.encode(texts)
    model = onnx_embedder.folder / MODEL_FILE
    with model.open("r+b") as handle:  # 4 MB of garbage in the middle of the weights
        handle.seek(model.stat().st_size // 2)
        handle.write(b"\x5a" * (4 << 20))
    again = OnnxEmbedder(MODEL, onnx_embedder.folder.parent)
    again.prepare()
    refusals = [r for r in caplog.records
                if r.levelname == "ERROR" and "refused the ONNX query encoder" in r.getMessage()]
    assert len(refusals) == 1 and MODEL_FILE in refusals[0].getMessage()
    assert float((again.encode(texts) * expected).sum(axis=1).min()) >= 0.9999


@pytest.mark.parametrize("int8_cpu", ["auto", "no-vnni"])
def test_the_int8_copy_is_close_and_kept_apart(onnx_embedder: OnnxEmbedder, int8_cpu: str,
                                               tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """On this CPU as it is, and as the copy is made for a CPU without VNNI (QUInt8 weights),
    which any machine can run. Where no copy is close enough, the float32 export serves."""
    cache = tmp_path / "cache"  # the float32 export only, so each choice makes its own copy
    shutil.copytree(onnx_embedder.folder, cache / onnx_embedder.folder.name)
    quantized = make_embedder(MODEL, backend="onnx-int8",
                              run=OnnxRun(int8_cpu=int8_cpu, cache_dir=cache))
    assert isinstance(quantized, OnnxEmbedder) and quantized.model_id == MODEL
    assert not quantized.is_exported()  # the float32 export is not taken for it
    texts = _sample()
    exact, close = onnx_embedder.encode(texts), quantized.encode(texts)
    record = json.loads((quantized.folder / "export.json").read_text())[int8.RECORD_KEY]
    kind = int8.cpu_kind(int8_cpu, int8.cpu_flags())
    assert record["cpu"] == kind and record["weights"] in int8.weight_types(kind), record
    if not record["meets"]:  # a CPU no int8 copy suits: the float32 export serves, warned
        assert quantized.vectors == "float32"
        assert float((exact * close).sum(axis=1).min()) >= 0.99999
        assert any("serving the float32 export" in r.getMessage() for r in caplog.records)
        return
    assert int8_cpu == "auto" or record["weights"] == "QUInt8"
    assert quantized.vectors == f"int8-{record['weights']}/{QUANTIZED}"  # weights and recipe
    single = np.vstack([quantized.encode([t]) for t in texts])  # one query a run, as served
    cosines = (exact * single).sum(axis=1)
    assert float(cosines.min()) >= int8.MIN_COSINE  # near the float32 vectors ...
    assert float(cosines.max()) < 0.99999  # ... and not them: another model file
    # a batch shares one activation scale (here, with a text at the length cap): a little looser
    assert float((exact * close).sum(axis=1).min()) >= 0.97
    assert quantized.folder != onnx_embedder.folder and quantized.is_exported()
    assert not OnnxEmbedder(MODEL, cache).folder.samefile(quantized.folder)
    assert (quantized.folder / MODEL_FILE).stat().st_size < \
        (onnx_embedder.folder / MODEL_FILE).stat().st_size
    model = quantized.folder / MODEL_FILE
    with model.open("r+b") as handle:  # damaged: refused and quantized again
        handle.seek(model.stat().st_size // 2)
        handle.write(b"\x5a" * (1 << 20))
    again = OnnxEmbedder(MODEL, cache, quantized=True, int8_cpu=int8_cpu)
    again.prepare()
    assert any("refused the ONNX query encoder" in r.getMessage() for r in caplog.records)
    assert float((again.encode(texts) * close).sum(axis=1).min()) >= 0.9999


@pytest.fixture(scope="module")
def int8_embedder(onnx_embedder: OnnxEmbedder,
                  tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    cache = tmp_path_factory.mktemp("int8-cache")  # a copy of its own, from the float32 export
    shutil.copytree(onnx_embedder.folder, cache / onnx_embedder.folder.name)
    quantized = make_embedder(MODEL, backend="onnx-int8", run=OnnxRun(cache_dir=cache))
    assert isinstance(quantized, OnnxEmbedder)
    return quantized


class TestTorchContract(EncoderContract):
    model_id, dimension = MODEL, 384

    @pytest.fixture
    def embedder(self, real_embedder: Embedder) -> Embedder:
        return real_embedder


class TestOnnxContract(EncoderContract):
    model_id, dimension = MODEL, 384

    @pytest.fixture
    def embedder(self, onnx_embedder: OnnxEmbedder) -> Embedder:
        return onnx_embedder


class TestOnnxInt8Contract(EncoderContract):
    model_id, dimension = MODEL, 384
    batch_cosine = 0.97  # a batch shares one activation scale (see the int8 test above)

    @pytest.fixture
    def embedder(self, int8_embedder: OnnxEmbedder) -> Embedder:
        return int8_embedder
