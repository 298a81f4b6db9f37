"""Smoothing before int8 (router.encoders.int8_smooth) on a small graph: the float32 results
are unchanged, the activations flatter, and the int8 copy closer (the real model:
tests/slow/test_onnx_embed.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from router.encoders import int8, int8_smooth

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

WIDTH, HIDDEN = 16, 32


def test_scales_follow_the_activations_and_the_weights() -> None:
    act = np.array([1.0, 100.0, 4.0, 0.0])
    weight = np.array([1.0, 1.0, 0.25, 100.0])
    s = int8_smooth.scales(act, weight, alpha=0.5)
    assert s.dtype == np.float32
    assert s[1] == pytest.approx(10.0)  # sqrt(100) / sqrt(1)
    assert s[2] == pytest.approx(4.0)  # sqrt(4) / sqrt(0.25)
    assert s[3] == pytest.approx(int8_smooth.SCALE_BOUNDS[0])  # silent, large weights: bounded
    assert np.allclose(int8_smooth.scales(act[:3], weight[:3], alpha=1.0), act[:3])
    assert np.allclose(int8_smooth.scales(act[:3], weight[:3], alpha=0.0), 1 / weight[:3])
    huge = int8_smooth.scales(np.array([1e12]), np.array([1e-12]), alpha=0.5)
    assert huge[0] == pytest.approx(int8_smooth.SCALE_BOUNDS[1])


def test_the_copy_is_calibrated_apart_from_the_sample_it_is_checked_on() -> None:
    texts = int8_smooth.calibration_texts()
    assert texts == (*int8_smooth.CALIBRATION_TEXTS, *int8_smooth.LONG_TEXTS)
    assert not set(texts) & set(int8.SAMPLE)  # the check measures texts it never saw
    assert len(int8_smooth.CALIBRATION_TEXTS) >= len(int8.SAMPLE)  # as varied a set
    assert any(len(t.split()) > 200 for t in texts)  # past the model's maximum length too
    assert all(len(t) > 150 for t in int8_smooth.LONG_TEXTS)


def _model(path: Path) -> None:
    """x -> (x @ A, x @ B -> relu -> @ C): two MatMuls share an input, one channel of which
    is a hundred times the others."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    weights = {"A": rng.normal(size=(WIDTH, WIDTH)), "B": rng.normal(size=(WIDTH, HIDDEN)),
               "C": rng.normal(size=(HIDDEN, WIDTH))}
    nodes = [helper.make_node("MatMul", ["x", "A"], ["ya"], name="a"),
             helper.make_node("MatMul", ["x", "B"], ["h"], name="b"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "C"], ["yc"], name="c")]
    graph = helper.make_graph(
        nodes, "toy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, None, WIDTH])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("ya", "yc")],
        [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _feeds(count: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        x = rng.normal(size=(1, int(rng.integers(3, 12)), WIDTH)).astype(np.float32)
        x[..., 3] *= 100.0  # the outlier channel
        out.append({"x": x})
    return out


def _run(path: Path, feeds: list[dict[str, np.ndarray]]) -> list[Any]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return [session.run(None, feed) for feed in feeds]


def _error(exact: list[Any], close: list[Any]) -> float:
    return max(float(np.abs(a - b).max() / np.abs(a).max())
               for pair_a, pair_b in zip(exact, close, strict=True)
               for a, b in zip(pair_a, pair_b, strict=True))


def test_smoothing_keeps_the_float_results_and_helps_int8(tmp_path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    plain, smoothed = tmp_path / "plain.onnx", tmp_path / "smoothed.onnx"
    _model(plain)
    assert int8_smooth.smooth(plain, smoothed, _feeds(8, seed=1)) == 2  # x, and relu's output
    graph = onnx.load(str(smoothed)).graph
    assert [n.op_type for n in graph.node].count("Mul") == 2
    held_out = _feeds(8, seed=2)  # not the calibration's
    exact = _run(plain, held_out)
    assert _error(exact, _run(smoothed, held_out)) < 1e-4  # the same function

    def int8_error(source: Path) -> float:
        target = tmp_path / f"{source.stem}-int8.onnx"
        quantize_dynamic(str(source), str(target), per_channel=True,
                         weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
        return _error(exact, _run(target, held_out))

    before, after = int8_error(plain), int8_error(smoothed)
    assert after < 0.7 * before, (before, after)  # 0.45x here

