"""The int8 copy's quantization chosen from the CPU's flags, and kept only when close enough
(the real model and onnxruntime: tests/slow/test_onnx_embed.py)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from router.config import load_config
from router.encoders import int8
from router.errors import InvalidRequest

AVX2_ONLY = frozenset({"sse4_2", "avx", "avx2", "fma"})  # e.g. an AMD EPYC of the Zen 2 era
AVX512 = AVX2_ONLY | {"avx512f", "avx512bw"}
VNNI = AVX512 | {"avx512_vnni"}


@pytest.mark.parametrize(("flags", "kind", "first"), [
    (AVX2_ONLY, "no-vnni", "QUInt8"), (AVX512, "no-vnni", "QUInt8"),
    (VNNI, "vnni", "QInt8"), (AVX2_ONLY | {"avx_vnni"}, "vnni", "QInt8"),
    (AVX512 | {"amx_int8"}, "vnni", "QInt8"), (frozenset(), "no-vnni", "QUInt8")])
def test_the_weights_follow_the_cpu(flags: frozenset[str], kind: str, first: str) -> None:
    assert int8.cpu_kind("auto", flags) == kind
    assert int8.weight_types(kind)[0] == first
    assert set(int8.weight_types(kind)) == {"QInt8", "QUInt8"}


def test_the_setting_forces_the_choice() -> None:
    assert int8.cpu_kind("no-vnni", VNNI) == "no-vnni"
    assert int8.cpu_kind("vnni", AVX2_ONLY) == "vnni"
    with pytest.raises(ValueError, match="not one of"):
        int8.cpu_kind("avx2", VNNI)
    assert load_config(env={"SKILL_ROUTER_INDEX_INT8_CPU": "no-vnni"}).index.int8_cpu == "no-vnni"
    assert load_config(env={}).index.int8_cpu == "auto"
    with pytest.raises(InvalidRequest, match=r"index\.int8_cpu"):
        load_config(env={"SKILL_ROUTER_INDEX_INT8_CPU": "sometimes"})


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu avx avx2 fma\n"
                    "processor\t: 1\nflags\t\t: fpu avx avx2 fma\n")
    assert int8.cpu_flags(info) == frozenset({"fpu", "avx", "avx2", "fma"})
    assert int8.cpu_flags(tmp_path / "missing") == frozenset()


class _Fake:
    """Quantizing writes a folder whose vectors sit at a given cosine to the float32 ones."""

    def __init__(self, cosine: dict[str, float]) -> None:
        self.cosine = cosine
        self.tried: list[str] = []

    def quantize(self, exact: Path, target: Path, weights: str) -> Path:
        target.mkdir(exist_ok=True)
        (target / "export.json").write_text(json.dumps({"weights": weights}))
        self.tried.append(weights)
        return target

    def encode(self, folder: Path, texts: Sequence[str]) -> np.ndarray:
        base = np.zeros((len(texts), 2), dtype=np.float32)
        base[:, 0] = 1.0
        if not (folder / "export.json").is_file():
            return base
        c = self.cosine[json.loads((folder / "export.json").read_text())["weights"]]
        base[0] = [c, np.sqrt(1 - c * c)]  # one text drifts, the others are exact
        return base


@pytest.fixture
def flags(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    seen = [AVX2_ONLY]
    monkeypatch.setattr(int8, "cpu_flags", lambda: seen[0])
    return seen


def test_the_first_copy_that_meets_the_bound_is_kept(tmp_path: Path,
                                                     flags: list[frozenset[str]]) -> None:
    fake = _Fake({"QUInt8": 0.99, "QInt8": 0.97})
    record = int8.make_copy(tmp_path / "exact", tmp_path / "copy", "auto", fake.quantize,
                            fake.encode)
    assert fake.tried == ["QUInt8"]
    assert record["cpu"] == "no-vnni" and record["weights"] == "QUInt8" and record["meets"]
    assert record["flags"] == ["avx2"] and record["min_cosine"] == pytest.approx(0.99, abs=1e-6)
    stored = json.loads((tmp_path / "copy" / "export.json").read_text())
    assert stored[int8.RECORD_KEY] == record


def test_on_a_vnni_cpu_int8_weights_come_first_and_uint8_when_they_drift(
        tmp_path: Path, flags: list[frozenset[str]]) -> None:
    flags[0] = VNNI
    fake = _Fake({"QUInt8": 0.99, "QInt8": 0.97})
    record = int8.make_copy(tmp_path / "exact", tmp_path / "copy", "auto", fake.quantize,
                            fake.encode)
    assert fake.tried == ["QInt8", "QUInt8"] and record["weights"] == "QUInt8"


def test_no_copy_close_enough_is_recorded_and_warned(
        tmp_path: Path, flags: list[frozenset[str]], caplog: pytest.LogCaptureFixture) -> None:
    fake = _Fake({"QUInt8": 0.95, "QInt8": 0.96})
    with caplog.at_level(logging.WARNING):
        record = int8.make_copy(tmp_path / "exact", tmp_path / "copy", "auto", fake.quantize,
                                fake.encode)
    assert not record["meets"] and fake.tried == ["QUInt8", "QInt8"]
    assert any("float32 export is served instead" in r.getMessage() for r in caplog.records)


def test_a_copy_made_for_another_cpu_is_measured_again(tmp_path: Path,
                                                       flags: list[frozenset[str]]) -> None:
    fake = _Fake({"QUInt8": 0.99, "QInt8": 0.97})
    flags[0] = VNNI
    made = int8.make_copy(tmp_path / "exact", tmp_path / "copy", "vnni", fake.quantize,
                          fake.encode)
    assert made["weights"] == "QUInt8" and made["cpu"] == "vnni"
    assert int8.checked_here(tmp_path / "exact", tmp_path / "copy", made, "vnni",
                             fake.encode) is made  # same kind of CPU: not measured again
    assert int8.checked_here(tmp_path / "exact", tmp_path / "copy", made, "no-vnni",
                             fake.encode) is None  # a forced choice makes its own copy
    flags[0] = AVX2_ONLY
    here = int8.checked_here(tmp_path / "exact", tmp_path / "copy", made, "auto", fake.encode)
    assert here is not None and here["cpu"] == "no-vnni" and here["made_for"] == "vnni"
    fake.cosine["QUInt8"] = 0.95  # as if this CPU's kernels drifted: to be made again
    assert int8.checked_here(tmp_path / "exact", tmp_path / "copy", made, "auto",
                             fake.encode) is None


def test_the_vectors_name_the_weights_and_the_recipe() -> None:
    record = {"weights": "QInt8", "meets": True}
    meta = {"quantized": "int8-matmul-per-channel-smoothed", int8.RECORD_KEY: record}
    assert int8.vectors_name(meta, "quantized") == "int8-QInt8/int8-matmul-per-channel-smoothed"
    older = {**meta, "quantized": "int8-matmul-per-channel"}
    assert int8.vectors_name(older, "quantized") != int8.vectors_name(meta, "quantized")
    other = {**meta, int8.RECORD_KEY: {**record, "weights": "QUInt8"}}
    assert int8.vectors_name(other, "quantized").startswith("int8-QUInt8/")
    assert int8.vectors_name({"quantized": "x"}, "quantized") == "float32"  # no int8 record
