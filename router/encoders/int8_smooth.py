"""Smoothing an ONNX export before its int8 copy is made: per input channel, part of the
activations' range is moved into the weights (SmoothQuant, Xiao et al., 2023).

onnxruntime's dynamic int8 MatMul quantizes a MatMul's input with one scale for the whole
tensor, so a few channels with large values (the layer-norm outputs and the feed-forward
activations of a BERT model have them) leave the others a handful of levels. Here each MatMul
with constant weights ``W`` gets its input divided by a per-channel scale ``s`` (a ``Mul``
before it) and ``W``'s rows multiplied by ``s``: the float32 result is the same, the
activations are flatter, the weights (quantized per output channel) absorb the difference.
``s = max|x|^alpha / max|w|^(1 - alpha)``, with ``max|x|`` measured per channel on a fixed set
of texts (``calibration_texts``: requests like ``router.encoders.int8.SAMPLE``'s but none of
them, and a few long requests), one text a run as queries are served, so the check on
``SAMPLE`` a copy must pass is made on texts the calibration never saw. MatMuls that share an
input share one ``Mul`` and one scale.

On the packaged all-MiniLM-L6-v2 with ``QInt8`` weights: min / mean cosine to float32 on
``CALIBRATION_TEXTS`` 0.985 / 0.994 without smoothing, 0.995 / 0.998 with it; on ``SAMPLE``,
which it never saw, 0.991 / 0.997 with it; 4-10% slower a query (docs/performance.md).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from router.encoders.onnx_session import MODEL_FILE, TOKENIZER_FILE

log = logging.getLogger(__name__)

ALPHA = 0.65  # the share of the activations' range moved into the weights (log scale)
SCALE_BOUNDS = (1e-3, 1e3)
SUFFIX = "_smoothed"

# Requests like int8.SAMPLE's, none of them in it: the copy is smoothed on these and checked on
# SAMPLE, so the check measures texts the calibration never saw.
CALIBRATION_TEXTS: tuple[str, ...] = (
    "hi", "Convert this PDF to markdown.", "résumé naïve café — unicode too",
    "Which of these three laptops has the best battery life for travel?",
    "Find me a flight from Paris to Berlin next Tuesday. Then book a hotel near the station.",
    "What's the weather like tomorrow in Lisbon?", "fix the failing unit test in parser.py",
    "Summarise the attached quarterly report in five bullet points for the board.",
    "kubectl rollout status deployment/api keeps timing out, what should I check?",
    "Draft a polite email declining the meeting and proposing Thursday instead.",
    "Plot monthly revenue by region as a stacked bar chart and save it as PNG.",
    "Translate this paragraph into German, keeping the technical terms in English.",
    "How many calories are in a bowl of porridge with honey?",
    "Refactor this function to remove the nested loops; it is O(n^2) on large inputs.",
    "Schedule a recurring stand-up every weekday at 9:30 with the design team.",
    "Audit the SQL schema for missing indexes on foreign keys.",
    "¿Puedes resumir este documento en español?", "git rebase keeps stopping on conflicts",
    "Create a Terraform module for an S3 bucket with versioning and encryption.",
    "Tell me a joke about penguins.", "Extract every table from this spreadsheet into CSV.",
    "Review my pull request for security problems, especially SQL injection and XSS.",
    "word " * 300,  # over the model's maximum length: truncated
)

# Several sentences each: the calibration sees long inputs as well as short ones.
LONG_TEXTS: tuple[str, ...] = (
    "I need help with three things today. First, pull the sales figures for March from the "
    "shared drive. Second, compare them with February and flag anything that dropped by more "
    "than ten percent. Third, write a short summary I can paste into the team channel.",
    "Our nightly build started failing after we upgraded the base image. The logs show a "
    "segmentation fault in the test runner, but only on the ARM workers. Here is the stack "
    "trace and the Dockerfile; can you tell me what changed and how to pin it back?",
    "Please retrieve the customer's order history, check whether the last shipment was "
    "delivered, and if it was not, open a support ticket with the tracking number and send "
    "the customer an apology email explaining the delay.",
    "User: can you set up a meeting with Priya and Tom next week? Assistant: Sure, which days "
    "work? User: Tuesday or Wednesday afternoon, one hour, and add a video link.",
)


def calibration_texts() -> tuple[str, ...]:
    """The texts the activations' per-channel maxima are measured on (none is in
    ``int8.SAMPLE``, the sample a copy is checked on)."""
    return (*CALIBRATION_TEXTS, *LONG_TEXTS)


def scales(activation_max: np.ndarray, weight_max: np.ndarray,
           alpha: float = ALPHA) -> np.ndarray:
    """Per input channel, the factor ``s`` the input is divided by and the weights' rows are
    multiplied by: ``max|x|^alpha / max|w|^(1 - alpha)``, bounded."""
    act = np.maximum(np.asarray(activation_max, dtype=np.float64), 1e-5)
    weight = np.maximum(np.asarray(weight_max, dtype=np.float64), 1e-5)
    return np.clip(act ** alpha / weight ** (1.0 - alpha), *SCALE_BOUNDS).astype(np.float32)


def smooth_export(folder: Path, target: Path, max_length: int) -> int:
    """Smooth the export in ``folder`` (its ``model.onnx`` and tokenizer) into the model file
    ``target``, calibrated on ``calibration_texts`` one text a run. Returns as ``smooth``."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    feeds = []
    for encoding in tokenizer.encode_batch(list(calibration_texts())):
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids),
                      "token_type_ids": np.zeros_like(ids)})
    return smooth(folder / MODEL_FILE, target, feeds)


def smooth(source: Path, target: Path, feeds: Sequence[dict[str, np.ndarray]],
           alpha: float = ALPHA) -> int:
    """Write a smoothed copy of the ONNX model at ``source`` to ``target``, the activations
    measured on ``feeds`` (the model's inputs, one run each). Returns how many inputs were
    smoothed."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    weights = {init.name: init for init in model.graph.initializer}
    groups: dict[str, list[Any]] = defaultdict(list)  # input tensor -> MatMuls with constant B
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            groups[node.input[0]].append(node)
    maxima = _activation_maxima(source, list(groups), feeds)
    muls = {}
    for tensor, nodes in groups.items():
        arrays = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
        s = scales(maxima[tensor], np.max([np.abs(w).max(axis=1) for w in arrays], axis=0), alpha)
        model.graph.initializer.append(numpy_helper.from_array(1.0 / s, tensor + "_inv_scale"))
        muls[tensor + SUFFIX] = helper.make_node("Mul", [tensor, tensor + "_inv_scale"],
                                                 [tensor + SUFFIX], name=tensor + "_Smooth")
        for node, array in zip(nodes, arrays, strict=True):
            weights[node.input[1]].CopyFrom(
                numpy_helper.from_array((array * s[:, None]).astype(np.float32), node.input[1]))
            node.input[0] = tensor + SUFFIX
    ordered: list[Any] = []
    for node in model.graph.node:  # each Mul just before its first consumer (topological)
        ordered.extend(muls.pop(name) for name in node.input if name in muls)
        ordered.append(node)
    del model.graph.node[:]
    model.graph.node.extend(ordered)
    onnx.save(model, str(target))
    log.debug("smoothed %d MatMul inputs of %s (alpha %.2f)", len(groups), source, alpha)
    return len(groups)


def _activation_maxima(source: Path, tensors: list[str],
                       feeds: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per tensor, the largest absolute value of each channel (last axis) over ``feeds``."""
    import onnx
    import onnxruntime as ort

    probe = onnx.load(str(source))
    for name in tensors:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(
            name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(probe.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    maxima: dict[str, np.ndarray] = {}
    for feed in feeds:
        for name, value in zip(tensors, session.run(tensors, feed), strict=True):
            top = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            maxima[name] = np.maximum(maxima[name], top) if name in maxima else top
    return maxima
