"""A build takes its skills and their files from the plan's skill source
(``BuildPlan.source``, ``router.skills.sources.base``): built from ``MemorySource``, whose skills
exist on no disk, the index holds that source's skills, diagnostics and file digests, and a
file changed in the source alone makes the next build a new version."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from router.builder.pipeline import Served, build, recorded_settings
from router.builder.plan import BuildPlan, EncoderPlan
from router.config import DiscoveryConfig
from router.encoders.hashing import HashEmbedder
from router.index.store import IndexSnapshot, load_index
from router.skills.model import Level
from router.skills.sources.base import create_source
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


def test_the_disk_is_the_default_source() -> None:
    plan = BuildPlan(NOWHERE, EncoderPlan("hash"))
    assert plan.source.key == "disk"
    assert plan == BuildPlan(NOWHERE, EncoderPlan("hash"), source=create_source())


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
