"""``python -m benchmarks.gpu_build``: its help runs anywhere, and a tiny hashing run prints
every stage and the texts/s."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
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


def test_embedding_only_stops_after_the_embedding(capsys: pytest.CaptureFixture[str]) -> None:
    gpu_build.main(["--count", "30", "--model", "hash", "--device", "cpu", "--embedding-only"])
    out = capsys.readouterr().out
    assert "  discovery " in out and "  embedding " in out and "30 skills: embedding" in out
    for stage in ("digests", "examples", "bm25", "faiss", "write"):
        assert f"  {stage} " not in out


def test_compared_rows_are_spread_over_the_catalog() -> None:
    assert gpu_build.spread(10, 3).tolist() == [0, 4, 9]  # 4.5 rounds to even
    assert gpu_build.spread(3, 5).tolist() == [0, 1, 2]
    assert gpu_build.spread(1_000_000, 2000)[[0, -1]].tolist() == [0, 999_999]


def test_top_overlap_counts_shared_members_of_each_top_k() -> None:
    reference = np.eye(6, dtype=np.float32)
    queries = np.array([[6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6]], dtype=np.float32)
    assert gpu_build.top_overlap(queries, reference, reference, k=3) == (1.0, 1.0)
    swapped = reference[[0, 1, 3, 2, 4, 5]]  # ours ranks rows 2 and 3 the other way
    queries = np.array([[6, 5, 0, 4, 0, 0]], dtype=np.float32)  # reference top 2: rows 0, 1
    assert gpu_build.top_overlap(queries, swapped, reference, k=2) == (1.0, 1.0)
    assert gpu_build.top_overlap(queries, swapped, reference, k=3) == (2 / 3, 0.0)


@pytest.mark.parametrize(("argv", "said"), [
    (["--tokenize-only", "--model", "hash"], "needs a model with a tokenizer"),
    (["--tokenize-workers", "-1", "--model", "hash"], "--tokenize-workers must be >= 0")])
def test_tokenize_only_refuses_what_it_cannot_time(argv: list[str], said: str) -> None:
    with pytest.raises(SystemExit, match=said) as stopped:
        gpu_build.main(["--count", "5", *argv])
    assert str(stopped.value).startswith("error: ")
