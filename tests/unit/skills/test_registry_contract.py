"""The registry source (``router.skills.sources.registry``) runs the shared skill-source
contract: the catalog is published as a well-known index on a loopback registry (the skill
with bundled files as an archive, ``.tar.gz`` or ``.zip``; the others as ``skill-md``),
discovered by fetching
it, and served from each skill's digest folder in the registry cache. ``change`` and
``remove`` tamper with that cached folder after the build, which the recorded digests catch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from router.config import DiscoveryConfig
from router.skills.model import Skill
from router.skills.sources.base import SkillSource
from router.skills.sources.registry import RegistrySource
from tests.support.registry_server import Registry, digest, registry_server, tar_gz, zip_bytes
from tests.support.skill_source_contract import Catalog, SkillSourceContract


class TestRegistrySource(SkillSourceContract):
    ARCHIVE = ("tar.gz", "application/gzip")  # the archive format, its Content-Type
    @pytest.fixture(autouse=True)
    def _registry(self) -> Iterator[None]:
        with registry_server() as reg:
            self.registry: Registry = reg
            yield

    @pytest.fixture
    def source(self) -> SkillSource:
        return RegistrySource()

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        entries = []
        for folder, files in sorted(catalog.items()):
            if set(files) == {"SKILL.md"}:  # a lone SKILL.md: the skill-md type
                body, kind, url = files["SKILL.md"], "skill-md", f"/skills/{folder}/SKILL.md"
                self.registry.serve(url, body, "text/markdown")
            else:  # with bundled files: an archive
                suffix, media = self.ARCHIVE
                pack = tar_gz if suffix == "tar.gz" else zip_bytes
                body, kind, url = pack(dict(files)), "archive", f"/skills/{folder}.{suffix}"
                self.registry.serve(url, body, media)
            entries.append({"name": folder, "type": kind, "description": "From the registry.",
                            "url": url, "digest": digest(body)})
        self.registry.index(entries)
        return DiscoveryConfig(registries=(self.registry.base,),
                               registry_cache=str(where / "cache"))

    def change(self, skill: Skill, path: str, data: bytes) -> None:
        (Path(skill.base_dir) / path).write_bytes(data)

    def remove(self, skill: Skill, path: str) -> None:
        (Path(skill.base_dir) / path).unlink()


class TestRegistrySourceZip(TestRegistrySource):
    ARCHIVE = ("zip", "application/zip")
