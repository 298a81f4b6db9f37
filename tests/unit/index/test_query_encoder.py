"""Which backend the query encoder of an index asks for, as the configuration names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import IndexConfig
from router.encoders.hashing import HashEmbedder
from router.index import query_encoder


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(model, backend) of every encoder made, each a hashing stand-in (nothing loads)."""
    made: list[tuple[str, str]] = []

    def make_embedder(model: str, *, backend: str, **_: object) -> HashEmbedder:
        made.append((model, backend))
        return HashEmbedder(8)

    monkeypatch.setattr(query_encoder, "make_embedder", make_embedder)
    return made


def test_the_gate_encoder_is_the_int8_copy_only(tmp_path: Path,
                                                asked: list[tuple[str, str]]) -> None:
    for name in ("onnx", "torch"):
        assert query_encoder.gate_encoder("m", tmp_path, IndexConfig(query_backend=name)) is None
    int8 = IndexConfig(query_backend="onnx-int8")
    assert query_encoder.gate_encoder("hash-8", tmp_path, int8) is None
    assert asked == []
    assert isinstance(query_encoder.gate_encoder("m", tmp_path, int8), HashEmbedder)
    assert asked == [("m", "onnx-int8")]


def test_the_served_backend_is_the_configured_one(tmp_path: Path,
                                                  asked: list[tuple[str, str]]) -> None:
    for name in ("torch", "onnx", "onnx-int8"):
        query_encoder.switch_query_embedder("m", tmp_path, IndexConfig(query_backend=name), "v1")
    query_encoder.prepare_query_embedder("m", tmp_path)  # as before: the ONNX export
    query_encoder.query_embedder("m", tmp_path)
    assert [backend for _, backend in asked] == ["torch", "onnx", "onnx-int8", "onnx", "onnx"]
