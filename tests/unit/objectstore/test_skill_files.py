"""A version's own copy of its skills' files (``router.objectstore.skill_files``): ``attach``
copies what the build recorded, and ``VersionFilesSource`` serves exactly those bytes, with the
skills' folders gone, under the refusals every source keeps; a version without them is served
from the disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from router.builder.version import build_index
from router.config import DiscoveryConfig
from router.encoders.hashing import HashEmbedder
from router.errors import InvalidRequest, NotFound, StaleFile, TooLarge
from router.index.store import load_index
from router.index.versions.layout import VERSIONS, current_version
from router.objectstore.skill_files import attach
from router.skills import digests
from router.skills.model import Skill
from router.skills.sources.disk import DiskSource
from router.skills.sources.version_files import FILES, VersionFilesSource
from tests.support.skill_source_contract import BUNDLED, CATALOG, LEAVING


def publish(where: Path) -> DiscoveryConfig:
    """The contract's catalog as skill folders on disk."""
    for folder, files in CATALOG.items():
        for rel, data in files.items():
            path = where / "skills" / folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return DiscoveryConfig(org_roots=(str(where / "skills"),))


def version(tmp_path: Path, *, carry: bool = True) -> tuple[VersionFilesSource, Skill, Path]:
    config = publish(tmp_path)
    found = DiskSource().discover(config)
    root = tmp_path / "index"
    build_index(found.skills, found.diagnostics, HashEmbedder(), root)
    folder = root / VERSIONS / current_version(root)
    if carry:
        assert attach(folder) == 5  # two skill files and pdf-tools' three bundled files
    load_index(root)  # the manifest lists what was attached: it still verifies
    source = VersionFilesSource(lambda: (str(folder), digests.load(folder)), DiskSource())
    pdf = next(s for s in found.skills if s.name == "pdf-tools")
    return source, pdf, tmp_path / "skills"


def test_the_version_serves_its_own_bytes_with_the_skills_gone(tmp_path: Path) -> None:
    source, pdf, skills = version(tmp_path)
    shutil.rmtree(skills)
    recorded = digests.load(Path(source._served()[0]))
    assert recorded is not None
    assert source.list_files(pdf).files == BUNDLED
    cut = source.list_files(pdf, cap=1)
    assert (cut.files, cut.omitted, cut.truncated) == (BUNDLED[:1], 2, True)
    for path in BUNDLED:
        assert source.read(pdf, path, recorded=recorded[pdf.key]) == CATALOG["pdf-tools"][path]
    assert source.read_skill_file(pdf, recorded=recorded[pdf.key]) == (
        CATALOG["pdf-tools"]["SKILL.md"])
    assert source.read_resource(pdf, "scripts/extract.py").media_type == "text/x-python"


def test_the_refusals_every_source_keeps(tmp_path: Path) -> None:
    source, pdf, skills = version(tmp_path)
    shutil.rmtree(skills)
    for path in LEAVING:
        with pytest.raises(InvalidRequest):
            source.read(pdf, path)
    for path in ("missing.txt", ".hidden", "scripts", "scripts/missing.py"):
        with pytest.raises(NotFound):
            source.read(pdf, path)
    assert len(source.read(pdf, "data/blob.bin", max_bytes=256)) == 256
    with pytest.raises(TooLarge):
        source.read(pdf, "data/blob.bin", max_bytes=255)


def test_a_copy_gone_from_the_version_is_not_found_and_says_to_reindex(tmp_path: Path) -> None:
    source, pdf, _ = version(tmp_path)
    folder = Path(source._served()[0])
    record = digests.load(folder)
    assert record is not None
    entry = record[pdf.key].get("notes.txt")
    assert entry is not None
    (folder / FILES / entry.digest.removeprefix("sha256:")).unlink()
    with pytest.raises(NotFound, match="Reindex"):
        source.read(pdf, "notes.txt")


def test_a_version_without_its_files_is_served_from_the_disk(tmp_path: Path) -> None:
    source, pdf, skills = version(tmp_path, carry=False)
    recorded = digests.load(Path(source._served()[0]))
    assert recorded is not None
    assert source.read(pdf, "notes.txt") == CATALOG["pdf-tools"]["notes.txt"]
    (skills / "pdf-tools" / "notes.txt").write_bytes(b"line one\r\nline 2!\n")
    with pytest.raises(StaleFile):  # the disk's rules: changed since the build
        source.read(pdf, "notes.txt", recorded=recorded[pdf.key])
