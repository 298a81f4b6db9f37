"""The one build recipe (``router.builder.recipe``): the plan checked before anything is read or
written, traffic compacted then folded in when the sources take it, the serving encoder the
gate is calibrated on, and the export after a build that wrote a version, never after one that
was skipped; a shard reads no traffic."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from router.builder import recipe as recipe_module
from router.builder.pipeline import Served, recorded_settings
from router.builder.recipe import Recipe, Sources
from router.builder.shards import ShardSpec
from router.config import Config, DiscoveryConfig, FeedbackConfig, IndexConfig
from router.errors import InvalidRequest
from router.examples.model import Example
from router.index.store import load_index
from router.index.versions.layout import read_manifest
from router.learning.backends import open_store
from router.learning.rows import ACTIVATE, Row
from router.learning.traffic import SETTINGS_KEY, read_traffic
from tests.support.embedders import HashEmbedder
from tests.support.skills import write_catalog

FEEDBACK = FeedbackConfig(min_sessions=2)
CONFIG = Config(index=IndexConfig(model="hash"), feedback=FEEDBACK)


def _recipe(tmp_path: Path, config: Config = CONFIG) -> Recipe:
    skills = write_catalog(tmp_path / "skills", 4)
    discovery = DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=(str(skills),))
    return Recipe.for_index(config, discovery, tmp_path / "index")


def _teach(index: Path) -> None:
    """Two sessions activate skill-1 for one request: one learned example."""
    store = open_store(index, FEEDBACK)
    for session in ("a", "b"):
        store.append(Row(kind=ACTIVATE, ts=time.time(), session=session, skill="skill-1",
                         query="turn this into a learned example", route_id=f"r-{session}",
                         shown=("skill-1", "skill-2")))
    store.close()


def _feedback_files(index: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((index / "feedback").iterdir())
            if p.is_file() and p.suffix != ".lock"}


def _settings(info_path: str) -> dict[str, Any]:
    return dict(read_manifest(Path(info_path))["settings"])


def test_an_unusable_precision_stops_before_anything_is_written(tmp_path: Path) -> None:
    skills = write_catalog(tmp_path / "skills", 2)
    discovery = DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=(str(skills),))
    with pytest.raises(InvalidRequest, match="fp16"):
        Recipe.for_index(CONFIG, discovery, tmp_path / "index", device="cpu", precision="fp16")
    assert not (tmp_path / "index").exists()


def test_traffic_is_compacted_then_folded_into_the_build(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    _teach(recipe.index_dir)
    before = _feedback_files(recipe.index_dir)
    outcome = recipe.build()
    assert outcome.info is not None
    assert _feedback_files(recipe.index_dir) != before  # compacted first
    learned = read_traffic(recipe.index_dir, FEEDBACK)
    assert len(learned.examples) == 1
    assert _settings(outcome.info.path)[SETTINGS_KEY] == learned.inputs[SETTINGS_KEY]


def test_sources_without_traffic_leave_the_store_alone(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    _teach(recipe.index_dir)
    before = _feedback_files(recipe.index_dir)
    given = Example("a request given as it is", ("skill-2",))
    outcome = recipe.build(Sources(examples=(given,), traffic=False))
    assert outcome.info is not None and _feedback_files(recipe.index_dir) == before
    manifest = read_manifest(Path(outcome.info.path))
    assert manifest["examples"]["rows"] == 1  # the example given, and none learned
    assert SETTINGS_KEY not in manifest["settings"]  # as ``eval`` builds


def test_the_gate_is_calibrated_on_the_encoder_already_serving(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    serving = HashEmbedder()
    assert recipe.gathered(Sources(traffic=False), serving).query is serving
    # the hash model serves with its own vectors: no other query encoder is made
    assert recipe.gathered(Sources(traffic=False)).query is None


def test_the_export_follows_a_build_that_wrote_a_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exported: list[tuple[str, Path]] = []
    monkeypatch.setattr(recipe_module, "prepare_query_embedder",
                        lambda model, index_dir, **_: exported.append((model, index_dir)))
    recipe = _recipe(tmp_path)
    first = recipe.build(export=True)
    assert first.info is not None and exported == [(first.info.model, recipe.index_dir)]
    snapshot = load_index(recipe.index_dir)
    served = Served(snapshot.info.version, snapshot.skills, recorded_settings(snapshot.info.path))
    again = recipe.build(serving=HashEmbedder(), served=served, export=True)
    assert again.info is None and len(exported) == 1  # nothing changed: nothing built or made
    recipe.build()
    assert len(exported) == 1  # not asked


def test_a_shard_reads_no_traffic_and_the_merge_does(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path)
    _teach(recipe.index_dir)
    before = _feedback_files(recipe.index_dir)
    for index in range(2):
        recipe.shard(ShardSpec(index, 2))
    assert _feedback_files(recipe.index_dir) == before
    merged = recipe.merge()
    assert merged.info is not None
    assert _settings(merged.info.path)[SETTINGS_KEY]["count"] == 1
