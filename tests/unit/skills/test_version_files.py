"""A version's own files as a skill source (``router.skills.sources.version_files``) runs the
shared skill-source contract: the catalog is built into a version that carries its files
(``router.objectstore.skill_files.attach``), and every read is served from those copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.builder.version import build_index
from router.config import DiscoveryConfig
from router.encoders.hashing import HashEmbedder
from router.index.versions.layout import VERSIONS, current_version
from router.objectstore.skill_files import attach
from router.skills import digests
from router.skills.digests import SkillDigests
from router.skills.model import Skill
from router.skills.sources.base import SkillSource
from router.skills.sources.disk import DiskSource
from router.skills.sources.version_files import FILES, VersionFilesSource
from tests.support.skill_source_contract import Catalog, SkillSourceContract, write_folders


class Disk(DiskSource):
    """The fallback, which must not be asked for a file the version carries."""

    def fetch_skill_file(self, skill: Skill) -> bytes:
        raise AssertionError("the version's own copy is served, not the disk's")


class TestVersionFilesSource(SkillSourceContract):
    FILES_CHANGE = False  # the version serves the copies made when it was built

    @pytest.fixture
    def source(self) -> SkillSource:
        self.folder: Path | None = None
        return VersionFilesSource(self._served, Disk())

    def _served(self) -> tuple[str, dict[str, SkillDigests] | None]:
        assert self.folder is not None
        return str(self.folder), digests.load(self.folder)

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        config = DiscoveryConfig(org_roots=(str(write_folders(where, catalog)),))
        found = DiskSource().discover(config)
        index = where / "index"
        build_index(found.skills, found.diagnostics, HashEmbedder(), index)
        self.folder = index / VERSIONS / current_version(index)
        assert attach(self.folder) and (self.folder / FILES).is_dir()
        return config

    def change(self, skill: Skill, path: str, data: bytes) -> None:
        (Path(skill.base_dir) / path).write_bytes(data)

    def remove(self, skill: Skill, path: str) -> None:
        (Path(skill.base_dir) / path).unlink()
