"""The ONNX backend's selection and checks that need no model (the real model: tests/slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from router.index.encoders import onnx as onnx_embed
from router.index.encoders.factory import make_embedder
from router.index.encoders.hashing import HashEmbedder
from router.index.encoders.sentence import SentenceTransformerEmbedder


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
    embedder = make_embedder(str(model), backend="onnx", cache_dir=tmp_path / "cache")
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
    padded = onnx_embed._pad([[1, 2, 3], [4]])
    assert padded.dtype == np.int64
    assert padded.tolist() == [[1, 2, 3], [4, 0, 0]]
