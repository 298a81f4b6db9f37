"""The gate is calibrated on the vectors of the encoder that serves queries (an int8 copy's,
when that serves), while skills and example rows keep the build encoder's."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from router.builder.inputs import Carried, Stages
from router.builder.pipeline import Served, build, recorded_settings
from router.builder.plan import BuildPlan, EncoderPlan
from router.builder.version import build_index
from router.calibration import gate
from router.calibration.gate import QUANTILE, bundled_requests
from router.calibration.settings_fit import ExampleRows
from router.config import DiscoveryConfig
from router.encoders.base import normalise
from router.encoders.hashing import HashEmbedder
from router.examples.model import Example
from router.index import example_store
from router.index.store import IndexSnapshot, load_index
from router.index.versions.layout import VERSIONS, current_version, read_manifest
from router.routing import calibrated
from router.routing.fusion import Fused, FusionConfig
from tests.support.embedders import CountingEmbedder
from tests.support.skills import skill_record, write_catalog

SKILLS = [skill_record("pdf-tools", "Extracts tables from PDF files.", root="/s",
                       content_hash="a"),
          skill_record("git-helper", "Writes git commit messages.", root="/s", content_hash="b")]


class Noisy(CountingEmbedder):
    """The same model with other vectors, as an int8 copy of it has."""

    def __init__(self, vectors: str = "int8-test") -> None:
        super().__init__()
        self.vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        exact = super().encode(texts)
        noise = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(
            0.0, 0.05, exact.shape[1]) for t in texts]) if texts else 0.0
        return normalise((exact + noise).astype(np.float32))


def _stored_calibration(root: Path) -> np.ndarray:
    folder = root / VERSIONS / current_version(root)
    rows = len(json.loads((folder / "examples.json").read_text())["rows"])
    return np.load(folder / "examples.npy")[rows:]


def test_the_gate_is_calibrated_on_the_query_encoders_vectors(tmp_path: Path) -> None:
    build, query = CountingEmbedder(), Noisy()
    build_index(SKILLS, [], build, tmp_path, carried=Carried(query=query))
    texts = bundled_requests()
    assert query.texts == texts  # the off-topic requests, as the query encoder embeds them
    snap = load_index(tmp_path)
    assert snap.calibration is not None
    best = (Noisy().encode(texts) @ snap.vectors.T).max(axis=1)
    assert snap.calibration.min_dense == pytest.approx(float(np.quantile(best, QUANTILE)),
                                                       abs=1e-6)
    exact = tmp_path / "exact"
    build_index(SKILLS, [], HashEmbedder(), exact)
    assert load_index(exact).calibration is not None
    assert snap.calibration.min_dense != load_index(exact).calibration.min_dense
    # what a turn is compared with stays the build encoder's: skills and off-topic rows
    assert np.allclose(_stored_calibration(tmp_path), HashEmbedder().encode(texts), atol=1e-6)
    assert np.allclose(snap.vectors, HashEmbedder().encode(
        [f"{s.name.replace('-', ' ')}: {s.description}" for s in snap.skills]))
    manifest = read_manifest(tmp_path / VERSIONS / current_version(tmp_path))
    assert manifest["gate"]["query_vectors"] == "int8-test"


def test_the_settings_fit_routes_held_out_requests_as_the_query_encoder_embeds_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = [Example("pull the tables out of this invoice pdf", ("pdf-tools",)),
                Example("write me a commit message. Keep it short please.", ("git-helper",))]
    seen: dict[str, Any] = {}

    def tune(skill_vectors: np.ndarray, centroid: np.ndarray, rows: ExampleRows,
             encode: Any, lexical_for: Any, **kwargs: Any) -> None:
        seen.update(rows=rows, encode=encode, held_out=rows.query_vectors)

    monkeypatch.setattr(example_store, "tune", tune)
    build, query = HashEmbedder(), Noisy()
    build_index(SKILLS, [], build, tmp_path, examples=examples,
                stages=Stages(fit_settings=True), carried=Carried(query=query))
    texts = list(seen["rows"].queries)
    assert sorted(texts) == sorted(e.query for e in examples)
    assert np.allclose(seen["rows"].vectors, build.encode(texts), atol=1e-6)  # the examples
    assert np.allclose(seen["held_out"], Noisy().encode(texts), atol=1e-6)  # ... as turns
    sentences = ["write me a commit message.", "Keep it short please."]
    assert np.allclose(seen["encode"](sentences), Noisy().encode(sentences), atol=1e-6)
    build_index(SKILLS, [], build, tmp_path / "plain", examples=examples,
                stages=Stages(fit_settings=True))
    assert seen["held_out"] is None  # no other query encoder: the rows' own vectors


def test_the_floor_follows_the_query_encoders_cosines() -> None:
    exact = np.array([0.2, 0.3, 0.4, 0.01])
    assert gate.floor_scale(exact, exact * 0.9) == pytest.approx(0.9)
    assert gate.floor_scale(exact, exact) == 1.0
    assert gate.floor_scale(np.zeros(3), np.ones(3)) == 1.0  # nothing to compare
    scaled = replace(gate.Calibration(0.3, 0.9, 10, 0), floor_scale=0.9)
    assert gate.Calibration.from_dict(scaled.to_dict()) == scaled
    assert gate.Calibration.from_dict({"min_dense": 0.3}).floor_scale == 1.0  # older indexes


def test_the_scaled_floor_is_the_one_in_force() -> None:
    fusion = FusionConfig()
    snap = SimpleNamespace(calibration=replace(gate.Calibration(0.1, 0.9, 10, 0),
                                               floor_scale=0.9), tuning=None)
    served = calibrated.tuned(cast(IndexSnapshot, snap), fusion)
    assert served.min_dense == pytest.approx(fusion.min_dense * 0.9)
    plain = SimpleNamespace(calibration=gate.Calibration(0.1, 0.9, 10, 0), tuning=None)
    assert calibrated.tuned(cast(IndexSnapshot, plain), fusion).min_dense == fusion.min_dense
    best = fusion.min_dense * 0.95  # under the configured floor, above the scaled one
    fused = [Fused(0, best, 0.0, 1.0)]
    assert calibrated.under_floor(fused, fusion) and not calibrated.under_floor(fused, served)


def test_a_copy_made_with_another_recipe_rebuilds_the_gate(tmp_path: Path) -> None:
    """The gate records the query vectors' weights and recipe: a copy remade with another
    recipe (same weights) makes the next build of an unchanged catalog calibrate again."""
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    plan = BuildPlan(DiscoveryConfig(bundled_roots=(str(skills),)), EncoderPlan("hash"))

    def rebuild(vectors: str) -> str | None:
        served = load_index(out) if (out / "CURRENT").exists() else None
        given = None if served is None else Served(served.info.version, served.skills,
                                                   recorded_settings(served.info.path))
        done = build(plan.served_by(Noisy(vectors)), out, served=given,
                     embedder=HashEmbedder())
        if done.info is None:
            return None
        return str(read_manifest(Path(done.info.path))["gate"]["query_vectors"])

    old, new = "int8-QInt8/int8-matmul-per-channel", "int8-QInt8/int8-matmul-per-channel-smoothed"
    assert rebuild(old) == old and rebuild(old) is None
    assert rebuild(new) == new and rebuild(new) is None
    assert rebuild("int8-QUInt8/int8-matmul-per-channel-smoothed") is not None
