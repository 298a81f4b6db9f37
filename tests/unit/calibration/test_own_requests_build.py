"""A build with no example requests fits the gate and fusion's dense weight to the catalog's
own requests (sentences of its skills' bodies), records both in the manifest, and Explain shows
the weight and why it was chosen; without bodies nothing is fitted."""

from __future__ import annotations

import json
from pathlib import Path

from router.builder.inputs import Carried, Stages
from router.builder.version import build_index
from router.calibration import gate
from router.calibration.settings import FittedSettings
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.index.store import load_index
from router.routing.fusion import FusionConfig
from router.routing.model import RouteQuery
from router.skills.model import Skill

SKILLS = 40
TOPICS = ["invoices", "calendars", "docker images", "spreadsheets", "git branches",
          "pdf forms", "audio clips", "log files"]


def _skills() -> list[Skill]:
    return [Skill(name=f"skill-{i}", description=f"Works with {TOPICS[i % len(TOPICS)]} {i}.",
                  location=f"/s/{i}/SKILL.md", base_dir=f"/s/{i}", content_hash=str(i))
            for i in range(SKILLS)]


def _bodies(skills: list[Skill]) -> dict[str, str]:
    return {s.key: (f"# {s.name}\n\nUse zq{i}x to check every one of the {TOPICS[i % 8]} "
                    f"named in the request first.\nThen run zq{i}y over each of them and report "
                    f"what changed since the last run.\n")
            for i, s in enumerate(skills)}


def test_a_build_without_examples_fits_and_records_the_gate_and_the_weight(
        tmp_path: Path) -> None:
    skills = _skills()
    info = build_index(skills, [], HashEmbedder(), tmp_path, stages=Stages(fit_settings=True),
                       carried=Carried(bodies=_bodies(skills)))
    manifest = json.loads((Path(info.path) / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["gate"]["self_requests"] == 2 * SKILLS
    assert manifest["gate"]["quantile"] == 0.98
    fitted = FittedSettings.from_dict(manifest["tuning"])
    assert fitted is not None and fitted.held_out == 2 * SKILLS
    assert "catalog's own requests" in fitted.reason
    snap = load_index(tmp_path)
    assert snap.tuning == fitted and snap.calibration is not None
    assert snap.calibration.self_requests == 2 * SKILLS
    turn = Engine(snap, Config(), HashEmbedder(), FusionConfig()).explain(
        RouteQuery(message="check the invoices with zq3x"))
    assert turn.dense_weight == fitted.dense_weight
    assert turn.settings_reason == fitted.reason


def test_without_bodies_nothing_is_fitted(tmp_path: Path) -> None:
    build_index(_skills(), [], HashEmbedder(), tmp_path, stages=Stages(fit_settings=True))
    snap = load_index(tmp_path)
    assert snap.tuning is None
    assert snap.calibration is not None and snap.calibration.self_requests == 0
    assert snap.calibration.margin == gate.MARGIN
