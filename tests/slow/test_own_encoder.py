"""The product's own encoder: its recipe runs from the committed pairs file offline (a small
slice of it here: every planned step, the record it writes, the model it makes loads in float32
from its fp16 weights), and the shipped model builds and serves an index as the base model does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file

from router.cli import main
from router.config import BASE_MODEL, TOOLS_MODEL, load_config
from router.encoders.base import OWN_MODELS_DIR, load_sentence_model, resolve_model_path
from router.encoders.tools_model.blend import mix
from router.encoders.tools_model.rows import file_digest
from router.engine import Engine
from router.index.versions.encoder import MARK
from router.routing.model import RouteQuery
from tests.support import REPO

PAIRS = REPO / "data" / "encoder" / "pairs.jsonl.gz"
DEMO = REPO / "examples" / "skills"


def test_the_recipe_trains_every_planned_step_from_the_committed_pairs(tmp_path: Path) -> None:
    out = tmp_path / "model"
    assert main(["train-encoder", "--pairs", str(PAIRS), "--out", str(out), "--per-source", "6",
                 "--threads", "1", "--device", "cpu"]) == 0
    record = json.loads((out / "training.json").read_text("utf-8"))
    assert record["steps"] == record["planned_steps"] > 0
    assert sum(record["requests"].values()) == 30 and record["hard_negatives"] > 0
    assert record["pairs_digest"] == file_digest(PAIRS)
    assert record["weights"] == file_digest(out / "model.safetensors")
    held = record["validation"]
    assert held["base"]["requests"] == held["tuned"]["requests"] > 100
    assert 0.0 < held["tuned"]["recall@5"] <= 1.0
    model = load_sentence_model(str(out))
    assert str(next(model.parameters()).dtype) == "torch.float32"
    assert model.encode(["convert 20 dollars to euros"]).shape == (1, 384)
    # blended with the base afterwards: the weights half way, the record says so
    blended = tmp_path / "blended"
    assert main(["train-encoder", "--pairs", str(PAIRS), "--blend-from", str(out),
                 "--blend", "0.5", "--out", str(blended)]) == 0
    mixed = json.loads((blended / "training.json").read_text("utf-8"))
    assert mixed["recipe"]["blend"] == 0.5 and mixed["tuned_weights"] == record["weights"]
    assert mixed["weights"] == file_digest(blended / "model.safetensors") != record["weights"]
    base = load_file(str(Path(resolve_model_path(BASE_MODEL)) / "model.safetensors"))
    expected = mix(base, load_file(str(out / "model.safetensors")), 0.5)
    written = load_file(str(blended / "model.safetensors"))
    assert all(torch.equal(written[k], v) for k, v in expected.items())
    assert mixed["validation"]["tuned"]["requests"] == held["tuned"]["requests"]


def test_the_shipped_encoder_builds_serves_and_starts_a_catalogs_fine_tuning(
        tmp_path: Path) -> None:
    folder = OWN_MODELS_DIR / TOOLS_MODEL
    if not (folder / "modules.json").is_file():
        pytest.fail(f"{folder} is missing: the product's encoder ships with the package")
    record = json.loads((folder / "training.json").read_text("utf-8"))
    assert record["weights"] == file_digest(folder / "model.safetensors")
    out = tmp_path / "index"
    assert main(["index", "--bundled", str(DEMO), "--no-project", "--no-home", "--out",
                 str(out), "--model", TOOLS_MODEL, "--fine-tune-encoder", "off"]) == 0
    assert _manifest(out)["model"] == TOOLS_MODEL
    engine = Engine.open(out, load_config(None))
    try:
        shown = engine.route(RouteQuery(message="fill in the fields of this PDF form", top_k=3))
        assert "pdf-forms" in [s.name for s in shown.skills]
    finally:
        engine.close()
    # a catalog's own fine-tuning starts from the product's encoder
    tuned = tmp_path / "tuned"
    assert main(["index", "--bundled", str(DEMO), "--no-project", "--no-home", "--out",
                 str(tuned), "--model", TOOLS_MODEL, "--fine-tune-encoder", "on", "--examples",
                 str(REPO / "eval" / "regression" / "train_examples.jsonl")]) == 0
    manifest = _manifest(tuned)
    assert manifest["model"].startswith(TOOLS_MODEL + MARK)
    assert manifest["fine_tune"]["base"] == TOOLS_MODEL


def _manifest(out: Path) -> dict[str, Any]:
    version = (out / "CURRENT").read_text("utf-8").strip()
    manifest: dict[str, Any] = json.loads(
        (out / "versions" / version / "manifest.json").read_text("utf-8"))
    return manifest
