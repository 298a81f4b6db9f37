"""The int8 copy of an ONNX query encoder, made for the CPU that serves it.

onnxruntime's dynamic int8 MatMul multiplies uint8 activations by the weights. With int8
(``QInt8``) weights its x86 kernels need VNNI (``avx512_vnni``, ``avx_vnni`` or AMX): on a CPU
with AVX2 alone they sum pairs of products in saturating 16-bit lanes, and the vectors drift
(min cosine to float32 0.969 measured on an AMD EPYC without VNNI). With uint8 (``QUInt8``)
weights they do not saturate there. So the copy is quantized for the CPU at hand, first with
the weights that CPU needs, then the other kind, and each candidate is measured against the
float32 export on a fixed sample (``SAMPLE``, texts the smoothing in ``router.encoders.
int8_smooth`` is not calibrated on); the first whose minimum cosine reaches
``MIN_COSINE`` is kept. The measurement and the CPU it was made on are recorded in the copy's
``export.json`` (``RECORD_KEY``). A copy loaded on a CPU of another kind than it was made for
is measured again there, and made again when it no longer meets the bound. When no candidate
meets it, the float32 export is served instead, with a warning.

``index.int8_cpu`` (``SKILL_ROUTER_INDEX_INT8_CPU``) forces the choice: ``auto`` reads the
CPU's flags (``/proc/cpuinfo``), ``vnni`` / ``no-vnni`` choose as for such a CPU, so any machine
can test the choice made for a CPU without VNNI.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from router.config import INT8_CPUS, Int8Cpu

log = logging.getLogger(__name__)

MIN_COSINE = 0.98  # the least cosine to float32 an int8 copy may have on the sample
RECORD_KEY = "int8"  # export.json of a copy: what it was made for and how close it came
VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
RECORDED_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp")
WEIGHTS = {Int8Cpu.VNNI: ("QInt8", "QUInt8"), Int8Cpu.NO_VNNI: ("QUInt8", "QInt8")}
CPUINFO = Path("/proc/cpuinfo")

# Short and long requests, several sentences, code words, other languages: what queries are.
SAMPLE: tuple[str, ...] = (
    "hello there",
    "Turn this Word document into a PDF.",
    "Übersetze bitte diesen Satz — merci",
    "Which phone plan is cheapest if I mostly use data abroad?",
    "Book a table for four on Friday evening. Then remind me an hour before.",
    "Will it rain in Osaka this weekend?",
    "the CI job fails on test_tokenizer.py, why",
    "Condense these meeting notes into three action items with owners.",
    "docker compose up hangs at 'waiting for db', how do I debug it?",
    "Write a friendly reply accepting the invitation for next Monday.",
    "Make a line chart of weekly signups per channel and export it as SVG.",
    "Put this README into French but leave the command names alone.",
    "How much protein is in two boiled eggs and a slice of toast?",
    "Speed up this loop; it copies the whole list on every iteration.",
    "Set a monthly reminder on the first Monday to review the budget.",
    "Check the Postgres tables for columns that should be NOT NULL.",
    "Pouvez-vous traduire ce rapport en anglais ?",
    "merge conflict in package-lock.json again",
    "Write a Helm chart for a Redis deployment with persistence enabled.",
    "Give me a riddle about octopuses.",
    "Pull the images out of this slide deck as PNG files.",
    "Look over this diff for race conditions and unsafe deserialization.",
    "token " * 300,  # over the model's maximum length: truncated
)


def cpu_flags(path: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags (x86 ``flags``, ARM ``Features``); empty where unknown."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def cpu_kind(setting: str, flags: frozenset[str]) -> Int8Cpu:
    """``vnni`` or ``no-vnni``: the CPU the copy is quantized for (``setting`` forces it)."""
    if setting not in INT8_CPUS:
        raise ValueError(f"int8 CPU choice {setting!r} is not one of {', '.join(INT8_CPUS)}")
    if setting != Int8Cpu.AUTO:
        return Int8Cpu(setting)
    return Int8Cpu.VNNI if flags & VNNI_FLAGS else Int8Cpu.NO_VNNI


def vectors_name(meta: dict[str, Any], recipe_key: str) -> str:
    """What the vectors of the export described by ``meta`` (its ``export.json``) are:
    ``float32`` without an int8 record, else ``int8-<weights>/<recipe>`` (the recipe is the
    copy's ``meta[recipe_key]`` marker). Everything calibrated on query vectors records this
    name, so a copy made with other weights or another recipe is calibrated for again."""
    record = meta.get(RECORD_KEY)
    if not isinstance(record, dict):
        return "float32"
    return f"int8-{record.get('weights')}/{meta.get(recipe_key, 'unknown')}"


def weight_types(kind: Int8Cpu) -> tuple[str, ...]:
    """The weight types to try for a CPU of ``kind``, the one it needs first."""
    return WEIGHTS[kind]


def closeness(exact: np.ndarray, close: np.ndarray) -> tuple[float, float]:
    """Minimum and mean cosine between matching rows of two normalised matrices."""
    cosines = (np.asarray(exact, dtype=np.float64) * close).sum(axis=1)
    return float(cosines.min()), float(cosines.mean())


def record_for(kind: Int8Cpu, weights: str, cosines: tuple[float, float],
               flags: frozenset[str]) -> dict[str, Any]:
    """The copy's record: the CPU it was made for and how close it came on ``SAMPLE``."""
    return {"cpu": kind, "flags": [f for f in RECORDED_FLAGS if f in flags],
            "weights": weights, "min_cosine": round(cosines[0], 6),
            "mean_cosine": round(cosines[1], 6), "bound": MIN_COSINE, "sample": len(SAMPLE),
            "meets": cosines[0] >= MIN_COSINE}


Encode = Callable[[Path, Sequence[str]], np.ndarray]  # vectors of texts by the export in a folder
Quantize = Callable[[Path, Path, str], Path]  # float32 folder, target, weight type


def make_copy(exact: Path, target: Path, setting: str, quantize: Quantize,
              encode: Encode) -> dict[str, Any]:
    """Quantize the export in ``exact`` into ``target`` for this CPU, keeping the first weight
    type whose copy meets the bound (the last tried when none does), and record it in the
    copy's ``export.json``. Returns the record."""
    flags = cpu_flags()
    kind = cpu_kind(setting, flags)
    reference = encode(exact, SAMPLE)
    record: dict[str, Any] = {}
    for weights in weight_types(kind):
        quantize(exact, target, weights)
        record = record_for(kind, weights, closeness(reference, encode(target, SAMPLE)), flags)
        log.info("int8 copy with %s weights for a %s CPU: min cosine %.4f, mean %.4f to "
                 "float32 on %d texts", weights, kind, record["min_cosine"],
                 record["mean_cosine"], len(SAMPLE))
        if record["meets"]:
            break
    write_record(target, record)
    if not record["meets"]:
        log.warning("no int8 copy of %s meets min cosine %.2f on this CPU (%s); the float32 "
                    "export is served instead", exact, MIN_COSINE, kind)
    return record


def write_record(folder: Path, record: dict[str, Any]) -> None:
    path = folder / "export.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta[RECORD_KEY] = record
    path.write_text(json.dumps(meta, indent=1), encoding="utf-8")


def made_for_here(record: dict[str, Any], setting: str) -> bool:
    """Whether the copy ``record`` describes was made for this kind of CPU (``setting``, as
    ``index.int8_cpu``): it is then served as made, with no measure and no float32 export."""
    return bool(record.get("cpu") == cpu_kind(setting, cpu_flags()))


def checked_here(exact: Path, copy: Path, record: dict[str, Any], setting: str,
                 encode: Encode) -> dict[str, Any] | None:
    """``record`` when the copy was made for this kind of CPU; otherwise the copy measured
    again here (recorded when the folder can be written), or None when it no longer meets the
    bound here (it is then to be made again). A forced ``setting`` (not ``auto``) makes its
    own copy: measured here, a copy made for another kind would pass on this CPU's kernels,
    and the forced choice would go untested."""
    if made_for_here(record, setting):
        return record
    flags = cpu_flags()
    kind = cpu_kind(setting, flags)
    if setting != Int8Cpu.AUTO:
        log.info("the int8 copy at %s was made for a %s CPU; index.int8_cpu %s makes its own",
                 copy, record.get("cpu"), setting)
        return None
    cosines = closeness(encode(exact, SAMPLE), encode(copy, SAMPLE))
    here = {**record_for(kind, str(record.get("weights")), cosines, flags),
            "made_for": record.get("cpu")}
    if not here["meets"]:
        log.warning("the int8 copy at %s was made for a %s CPU and is not close enough on this "
                    "%s one (min cosine %.4f < %.2f); making it again", copy, record.get("cpu"),
                    kind, cosines[0], MIN_COSINE)
        return None
    try:
        write_record(copy, here)
    except OSError as exc:
        log.info("could not record the int8 check at %s: %s", copy, exc)
    return here
