"""A build takes its skills and their files from the plan's skill source
(``BuildPlan.source``, ``router.skills.sources.base``): built from ``MemorySource``, whose skills
exist on no disk, the index holds that source's skills, diagnostics and file digests, and a
file changed in the source alone makes the next build a new version."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from router.builder.pipeline import Served, build, discovery_from_settings, recorded_settings
from router.builder.plan import BuildPlan, EncoderPlan
from router.config import Config, DiscoveryConfig, IndexConfig
from router.encoders.hashing import HashEmbedder
from router.errors import InvalidRequest
from router.index.store import IndexSnapshot, load_index
from router.index.versions.layout import read_manifest
from router.skills.model import Level
from router.skills.sources.base import create_source
from router.skills.sources.disk import DiskSource
from tests.support.skill_source_contract import CATALOG, PDF_DESCRIPTION, MemorySource

# no root at all: the disk would find nothing here
NOWHERE = DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=())


def _memory(base: Path) -> MemorySource:
    """The contract's catalog, held in memory under folder names that exist on no disk."""
    source = MemorySource()
    for folder, files in CATALOG.items():
        source.folders[str(base / folder)] = dict(files)
    return source


def _rebuild(plan: BuildPlan, out: Path) -> IndexSnapshot | None:
    """Build ``plan`` into ``out`` given what it serves now; the new snapshot (None: no
    change, nothing built)."""
    served = load_index(out)
    given = Served(served.info.version, served.skills, recorded_settings(served.info.path))
    done = build(plan, out, served=given, embedder=HashEmbedder())
    return None if done.info is None else load_index(out)


def test_the_default_source_unless_the_configuration_chooses_one() -> None:
    plan = BuildPlan(NOWHERE, EncoderPlan("hash"))
    assert plan.source.key == "disk+mcp"
    assert plan == BuildPlan(NOWHERE, EncoderPlan("hash"), source=create_source())
    config = Config(index=IndexConfig(model="hash"))
    assert BuildPlan.from_config(config, NOWHERE).source.key == "disk+mcp"
    chosen = BuildPlan.from_config(config, replace(NOWHERE, source="disk"))
    assert isinstance(chosen.source, DiskSource)
    with pytest.raises(InvalidRequest, match="unknown skill source 'ftp'"):
        BuildPlan.from_config(config, replace(NOWHERE, source="ftp"))


def test_the_version_records_its_source_and_a_reindex_repeats_it(tmp_path: Path) -> None:
    out = tmp_path / "index"
    build(BuildPlan(replace(NOWHERE, source="disk"), EncoderPlan("hash"),
                    source=create_source("disk")), out, embedder=HashEmbedder())
    info = load_index(out).info
    assert info.source == "disk"
    assert read_manifest(Path(info.path))["source"] == "disk"
    recorded = discovery_from_settings(recorded_settings(info.path), info.version)
    assert recorded.source == "disk"  # what a Reindex resolves its plan's source from


def test_a_build_from_a_memory_source_indexes_its_skills(tmp_path: Path) -> None:
    source = _memory(tmp_path / "nowhere")
    out = tmp_path / "index"
    done = build(BuildPlan(NOWHERE, EncoderPlan("hash"), source=source), out,
                 embedder=HashEmbedder())
    assert done.info is not None
    index = load_index(out)
    assert [s.name for s in index.skills] == ["git-helper", "pdf-tools"]
    assert index.skills[1].description == PDF_DESCRIPTION
    assert index.skills[1].base_dir == str(tmp_path / "nowhere" / "pdf-tools")
    errors = [d for d in index.diagnostics if d.level is Level.ERROR]
    assert [Path(d.path).parent.name for d in errors] == ["broken"]
    assert index.digests == {s.key: source.digest(s) for s in index.skills}
    assert not (tmp_path / "nowhere").exists()  # nothing was read from, or written to, there
    assert index.info.source == "memory"


def test_a_full_build_digests_through_the_plan_s_source(tmp_path: Path) -> None:
    source = _memory(tmp_path / "nowhere")
    out = tmp_path / "index"
    plan = BuildPlan(NOWHERE, EncoderPlan("hash"), source=source)
    build(plan, out, embedder=HashEmbedder())
    served = load_index(out)
    given = Served(served.info.version, served.skills, recorded_settings(served.info.path))
    done = build(plan, out, served=given, full=True, embedder=HashEmbedder())
    assert done.info is not None and done.info.version != served.info.version
    index = load_index(out)
    assert index.digests == {s.key: source.digest(s) for s in index.skills}


def test_a_file_changed_in_the_source_makes_a_new_version(tmp_path: Path) -> None:
    source = _memory(tmp_path / "nowhere")
    out = tmp_path / "index"
    plan = BuildPlan(NOWHERE, EncoderPlan("hash"), source=source)
    build(plan, out, embedder=HashEmbedder())
    first = load_index(out)
    assert _rebuild(plan, out) is None  # same skills, same files: nothing to build
    pdf = next(s for s in first.skills if s.name == "pdf-tools")
    source.folders[pdf.base_dir]["notes.txt"] = b"line one\r\nline 2!\n"  # the skill unchanged
    rebuilt = _rebuild(replace(plan, source=source), out)
    assert rebuilt is not None and rebuilt.info.version != first.info.version
    assert rebuilt.digests is not None
    assert rebuilt.digests[pdf.key] == source.digest(pdf) != (first.digests or {})[pdf.key]
