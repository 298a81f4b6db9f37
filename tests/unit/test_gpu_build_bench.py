"""``python -m benchmarks.gpu_build``: its help runs anywhere, and a tiny hashing run prints
every stage and the texts/s."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import gpu_build
from tests.support import REPO


def test_help_runs_without_a_gpu() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu_build", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    assert "--count" in done.stdout and "--device" in done.stdout


def test_a_small_run_prints_each_stage(capsys: pytest.CaptureFixture[str]) -> None:
    gpu_build.main(["--count", "40", "--model", "hash", "--device", "cpu"])
    out = capsys.readouterr().out
    for stage in ("discovery", "embedding", "bm25", "faiss", "write"):
        assert f"  {stage} " in out
    assert "40 skills: embedding" in out and "texts/s" in out


def test_cuda_is_refused_by_name_where_torch_sees_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from router.encoders.device import CudaReport

    none = CudaReport("2.13.0+cpu", built_with_cuda=False, device_count=0, visible_devices=None)
    monkeypatch.setattr("router.encoders.device.probe", lambda: none)
    with pytest.raises(SystemExit, match="CUDA") as stopped:
        gpu_build.main(["--count", "5", "--model", "hash", "--device", "cuda"])
    assert str(stopped.value).startswith("error: ")
