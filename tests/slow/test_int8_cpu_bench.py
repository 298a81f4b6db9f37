"""``python -m benchmarks.int8_cpu``: both int8 copies made, then run, on this CPU."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from benchmarks import int8_cpu
from router.encoders import int8

pytest.importorskip("onnxruntime")


def test_make_then_run_reports_each_copy_against_float32_and_a_tagged_run_against_native(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    int8_cpu.make(tmp_path)
    made = capsys.readouterr().out
    # QUInt8 weights saturate on no CPU; QInt8 gives way to them where its kernels do
    assert re.search(r"^vnni: int8-QU?Int8/", made, re.M), made
    assert re.search(r"^no-vnni: int8-QUInt8/", made, re.M), made
    int8_cpu.run(tmp_path, "native")
    native = capsys.readouterr().out.splitlines()
    assert len(native) == 2 and not any("native run" in line for line in native)
    for line in native:
        low, mean = (float(x) for x in re.findall(r"(?:min|mean) (\d\.\d+)", line))
        assert int8.MIN_COSINE <= low <= mean < 0.99999, line
    int8_cpu.run(tmp_path, "again")
    again = capsys.readouterr().out.splitlines()
    assert all(line.endswith("to the native run 0.0000") for line in again), again
    for kind in int8_cpu.KINDS:
        saved = np.load(tmp_path / f"{kind}-native.npy")
        assert saved.shape == (len(int8.SAMPLE), 384)
        assert np.array_equal(saved, np.load(tmp_path / f"{kind}-again.npy"))
