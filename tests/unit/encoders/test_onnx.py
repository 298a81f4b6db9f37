"""The ONNX backend's selection and checks that need no model (the real model: tests/slow)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from router.encoders import export_integrity, int8
from router.encoders import onnx as onnx_embed
from router.encoders.factory import OnnxRun, make_embedder
from router.encoders.hashing import HashEmbedder
from router.encoders.onnx_session import _pad
from router.encoders.sentence import SentenceTransformerEmbedder


def _sentence_model(folder: Path, *, mean: bool = True) -> Path:
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
    ]))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 8, "pooling_mode_mean_tokens": mean,
        "pooling_mode_cls_token": not mean}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    return folder


def test_export_dir_is_a_safe_slug(tmp_path: Path) -> None:
    assert onnx_embed.export_dir(tmp_path, "org/model name") == tmp_path / "org-model-name"


def test_mean_pooling_model_is_accepted(tmp_path: Path) -> None:
    model = _sentence_model(tmp_path / "m")
    embedder = onnx_embed.OnnxEmbedder.checked(str(model), tmp_path / "cache")
    assert embedder.model_id == str(model)
    assert not embedder.is_exported()


def test_cls_pooling_falls_back_to_sentence_transformers(tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    model = _sentence_model(tmp_path / "m", mean=False)
    with pytest.raises(onnx_embed.UnsupportedModel, match="mean pooling"):
        onnx_embed.OnnxEmbedder.checked(str(model), tmp_path / "cache")
    embedder = make_embedder(str(model), backend="onnx",
                             run=OnnxRun(cache_dir=tmp_path / "cache"))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert "ONNX encoder unavailable" in caplog.text


def test_hub_names_are_not_exported(tmp_path: Path) -> None:
    with pytest.raises(onnx_embed.UnsupportedModel, match="not a local model folder"):
        onnx_embed.OnnxEmbedder.checked("someone/remote-model", tmp_path)


def test_hash_model_ignores_backend_and_unknown_backend_fails() -> None:
    assert isinstance(make_embedder("hash-16", backend="onnx"), HashEmbedder)
    with pytest.raises(ValueError, match="unknown embedding backend"):
        make_embedder("some-model", backend="tensorrt")


def test_pad_right_pads_with_zeros() -> None:
    padded = _pad([[1, 2, 3], [4]])
    assert padded.dtype == np.int64
    assert padded.tolist() == [[1, 2, 3], [4, 0, 0]]


def _fake_export(folder: Path, model: str) -> Path:
    """An export folder as ``onnx_embed.export`` writes it, with stand-in file contents."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / onnx_embed.MODEL_FILE).write_bytes(b"weights" * 1000)
    (folder / onnx_embed.TOKENIZER_FILE).write_text("{}")
    meta = {"format": onnx_embed.EXPORT_FORMAT, "model": model, "max_length": 8, "dimension": 8,
            "sha256": export_integrity.record(folder, onnx_embed.CHECKED_FILES)}
    (folder / onnx_embed.META_FILE).write_text(json.dumps(meta))
    return folder


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each call of ``onnx_embed.export`` (replaced by a stand-in writer), in order."""
    calls: list[Path] = []

    def fake(model: str, target: Path) -> Path:
        calls.append(target)
        return _fake_export(target, model)

    monkeypatch.setattr(onnx_embed, "export", fake)
    return calls


def test_an_intact_export_is_used_as_is(tmp_path: Path, exports: list[Path]) -> None:
    embedder = onnx_embed.OnnxEmbedder("m", tmp_path)
    _fake_export(embedder.folder, "m")
    assert embedder._intact_meta()["dimension"] == 8
    assert exports == []


@pytest.mark.parametrize("damage", ["overwrite", "truncate", "no checksums"])
def test_a_damaged_export_is_refused_with_an_error_and_exported_again(
        tmp_path: Path, exports: list[Path], caplog: pytest.LogCaptureFixture,
        damage: str) -> None:
    embedder = onnx_embed.OnnxEmbedder("m", tmp_path)
    folder = _fake_export(embedder.folder, "m")
    model = folder / onnx_embed.MODEL_FILE
    if damage == "overwrite":  # same size, different bytes
        model.write_bytes(b"garbage" * 1000)
    elif damage == "truncate":
        model.write_bytes(model.read_bytes()[:100])
    else:
        meta = json.loads((folder / onnx_embed.META_FILE).read_text())
        del meta["sha256"]
        (folder / onnx_embed.META_FILE).write_text(json.dumps(meta))
    with caplog.at_level(logging.ERROR):
        meta = embedder._intact_meta()
    assert exports == [folder]
    assert export_integrity.problem(folder, meta, onnx_embed.CHECKED_FILES) is None
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "refused the ONNX query encoder" in errors[0]


def test_an_export_without_the_current_format_is_exported_again(tmp_path: Path,
                                                                exports: list[Path]) -> None:
    embedder = onnx_embed.OnnxEmbedder("m", tmp_path)
    folder = _fake_export(embedder.folder, "m")
    meta = json.loads((folder / onnx_embed.META_FILE).read_text())
    (folder / onnx_embed.META_FILE).write_text(json.dumps({**meta, "format": 1}))
    embedder._intact_meta()
    assert exports == [folder]


def _fake_copy(embedder: onnx_embed.OnnxEmbedder, model: str, cpu: str) -> Path:
    """An int8 copy's folder as ``int8.make_copy`` leaves it, made for a ``cpu`` CPU."""
    folder = _fake_export(embedder.folder, model)
    meta = json.loads((folder / onnx_embed.META_FILE).read_text())
    meta[onnx_embed.QUANTIZED_KEY] = onnx_embed.QUANTIZED
    meta[int8.RECORD_KEY] = {"cpu": cpu, "weights": "QInt8", "min_cosine": 0.99,
                             "meets": True}
    (folder / onnx_embed.META_FILE).write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("setting", ["auto", "vnni", "no-vnni"])
def test_a_copy_made_for_this_cpu_loads_without_the_float32_export(
        tmp_path: Path, exports: list[Path], monkeypatch: pytest.MonkeyPatch,
        setting: str) -> None:
    copy = onnx_embed.OnnxEmbedder("m", tmp_path, quantized=True, int8_cpu=setting)
    _fake_copy(copy, "m", int8.cpu_kind(setting, int8.cpu_flags()))
    exact = onnx_embed.OnnxEmbedder("m", tmp_path).folder
    _fake_export(exact, "m")
    (exact / onnx_embed.MODEL_FILE).write_bytes(b"damaged")  # never read: not even hashed

    def measured(*_: object) -> None:
        raise AssertionError("a copy made for this kind of CPU is not measured again")

    monkeypatch.setattr(int8, "checked_here", measured)
    assert copy._intact_meta()[int8.RECORD_KEY]["weights"] == "QInt8"
    assert exports == []  # the float32 export was neither checked nor made again
