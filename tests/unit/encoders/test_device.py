"""``index --device`` / ``--precision``: resolution against what torch reports (injected, so no
GPU is needed), the config keys, and the CLI refusing an unusable device before the index
folder changes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from router.builder import pipeline as build
from router.builder.plan import BuildPlan, EncoderPlan
from router.builder.shards import ShardSpec
from router.cli import main
from router.config import DiscoveryConfig, load_config
from router.encoders.device import CudaReport, Placement, resolve
from router.encoders.hashing import HashEmbedder
from router.errors import InvalidRequest
from router.index.versions.layout import read_manifest
from tests.support import REPO
from tests.support.processes import cli_argv
from tests.support.skills import write_catalog

CPU_TORCH = CudaReport("2.13.0+cpu", built_with_cuda=False, device_count=0, visible_devices=None)
ONE_GPU = CudaReport("2.13.0+cu128", built_with_cuda=True, device_count=1, visible_devices=None)
HIDDEN = CudaReport("2.13.0+cu128", built_with_cuda=True, device_count=0, visible_devices="")
NO_GPU = CudaReport("2.13.0+cu128", built_with_cuda=True, device_count=0, visible_devices=None)


def test_auto_takes_cuda_when_torch_sees_it_else_the_cpu() -> None:
    assert resolve("auto", "fp32", ONE_GPU) == Placement("cuda:0", "fp32")
    assert resolve("auto", "fp16", ONE_GPU) == Placement("cuda:0", "fp16")
    assert resolve("auto", "fp32", CPU_TORCH) == Placement("cpu", "fp32")
    assert resolve("cpu", "fp32", ONE_GPU) == Placement("cpu", "fp32")
    assert resolve("cuda", "fp32", ONE_GPU).device == "cuda:0"
    assert resolve("cuda:0", "fp16", ONE_GPU).on_cuda


@pytest.mark.parametrize(("device", "report", "found"), [
    ("cuda", CPU_TORCH, "torch 2.13.0+cpu has no CUDA support"),
    ("cuda", HIDDEN, "CUDA_VISIBLE_DEVICES is empty"),
    ("cuda:0", NO_GPU, "no CUDA device"),
    ("cuda:3", ONE_GPU, "cuda:3 asked for, but CUDA has only 1 device"),
])
def test_an_unusable_cuda_device_is_named_with_what_was_found(
        device: str, report: CudaReport, found: str) -> None:
    with pytest.raises(InvalidRequest, match="CUDA") as caught:
        resolve(device, "fp32", report)
    assert found in str(caught.value)


def test_fp16_is_refused_on_the_cpu_by_name() -> None:
    for device, report in (("cpu", ONE_GPU), ("auto", CPU_TORCH)):
        with pytest.raises(InvalidRequest, match="fp16"):
            resolve(device, "fp16", report)


@pytest.mark.parametrize(("device", "precision"), [("gpu", "fp32"), ("cuda:x", "fp32"),
                                                  ("cpu", "bf16")])
def test_unknown_names_are_refused(device: str, precision: str) -> None:
    with pytest.raises(InvalidRequest):
        resolve(device, precision, ONE_GPU)


def test_config_keys_default_and_validate(tmp_path: Path) -> None:
    config = load_config(env={})
    assert (config.index.device, config.index.precision) == ("auto", "fp32")
    env = {"SKILL_ROUTER_INDEX_DEVICE": "cuda:1", "SKILL_ROUTER_INDEX_PRECISION": "fp16"}
    assert load_config(env=env).index.device == "cuda:1"
    with pytest.raises(InvalidRequest, match=r"index\.device"):
        load_config(env={"SKILL_ROUTER_INDEX_DEVICE": "tpu"})
    with pytest.raises(InvalidRequest, match=r"index\.precision"):
        load_config(env={"SKILL_ROUTER_INDEX_PRECISION": "int8"})


def _snapshot(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, Path]:
    skills = write_catalog(tmp_path / "skills")
    out = tmp_path / "index"
    assert main(_index_args(skills, out)) == 0
    return skills, out


def _index_args(skills: Path, out: Path, *extra: str) -> list[str]:
    return ["index", "--bundled", str(skills), "--no-project", "--no-home", "--out", str(out),
            "--model", "hash", *extra]


def test_a_build_records_its_device_but_keeps_the_model(built: tuple[Path, Path]) -> None:
    _, out = built
    version = (out / "CURRENT").read_text().strip()
    manifest = json.loads((out / "versions" / version / "manifest.json").read_text())
    assert manifest["build"] == {"device": "cpu", "precision": "fp32"}
    assert manifest["model"] == "hash-256" and "device" not in manifest["settings"]


@pytest.mark.parametrize("extra", [("--device", "cuda"), ("--device", "cuda:1"),
                                   ("--shard", "0/2", "--device", "cuda"),
                                   ("--merge", "--device", "cuda")])
def test_cuda_without_a_usable_device_exits_before_touching_the_index(
        built: tuple[Path, Path], extra: tuple[str, ...], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("router.encoders.device.probe", lambda: CPU_TORCH)
    skills, out = built
    before = _snapshot(out)
    capsys.readouterr()
    assert main(_index_args(skills, out, *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "CUDA" in err and "has no CUDA support" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert _snapshot(out) == before  # no new version, no .tmp-*, no partial


def test_fp16_on_the_cpu_exits_naming_fp16(built: tuple[Path, Path],
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("router.encoders.device.probe", lambda: CPU_TORCH)
    skills, out = built
    before = _snapshot(out)
    capsys.readouterr()
    assert main(_index_args(skills, out, "--device", "cpu", "--precision", "fp16")) == 2
    assert "fp16" in capsys.readouterr().err
    assert _snapshot(out) == before


def test_hidden_devices_in_a_real_process_exit_non_zero_without_a_traceback(
        built: tuple[Path, Path]) -> None:
    """The real torch of this machine (CPU-only here, or a CUDA build with every device
    hidden): either way no CUDA device is usable."""
    skills, out = built
    before = _snapshot(out)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(cli_argv(*_index_args(skills, out, "--device", "cuda")), cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "CUDA" in done.stderr and "Traceback" not in done.stderr
    assert ("CUDA_VISIBLE_DEVICES is empty" in done.stderr
            or "has no CUDA support" in done.stderr)
    assert _snapshot(out) == before


class _GpuMade(HashEmbedder):
    """The hashing embedder, recorded as if it had run on a GPU in fp16."""

    def build_record(self) -> dict[str, str]:
        return {"device": "cuda:0", "precision": "fp16"}


def test_vectors_made_on_a_gpu_are_reused_by_a_cpu_build_and_merge_across_devices(
        tmp_path: Path) -> None:
    skills = write_catalog(tmp_path / "skills")
    out = tmp_path / "index"
    plan = BuildPlan(DiscoveryConfig(bundled_roots=(str(skills),)), EncoderPlan("hash"))
    first = build.build(plan, out, embedder=_GpuMade()).info
    assert first is not None
    assert read_manifest(Path(first.path))["build"]["device"] == "cuda:0"
    again = build.build(plan, out).info
    assert again is not None and again.reused_embeddings == again.skill_count  # not re-embedded
    build.build_shard(plan, out, ShardSpec(0, 2), embedder=_GpuMade())
    build.build_shard(plan, out, ShardSpec(1, 2))
    merged = build.merge_shards(plan, out).info
    assert merged is not None and merged.skill_count == first.skill_count
    assert read_manifest(Path(merged.path))["model"] == first.model
