"""The skill-source base and factory (router.skills.sources.base): keys, registration, a base that
imports no implementation, and the contract run on a source with no disk (so it holds for more
than the disk)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from router.config import DiscoveryConfig
from router.errors import InvalidRequest
from router.skills.model import Skill
from router.skills.sources import base
from router.skills.sources.base import SkillSource, create_source, register_source, source_keys
from tests.support.skill_source_contract import Catalog, MemorySource, SkillSourceContract


class TestMemorySource(SkillSourceContract):
    @pytest.fixture
    def source(self) -> SkillSource:
        self.memory = MemorySource()
        return self.memory

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        for folder, files in catalog.items():
            self.memory.folders[f"memory://{where.name}/{folder}"] = dict(files)
        return DiscoveryConfig()

    def change(self, skill: Skill, path: str, data: bytes) -> None:
        self.memory.folders[skill.base_dir][path] = data

    def remove(self, skill: Skill, path: str) -> None:
        del self.memory.folders[skill.base_dir][path]


def test_an_unknown_key_names_the_known_ones() -> None:
    with pytest.raises(InvalidRequest, match=r"unknown skill source 'ftp'; known: .*disk"):
        create_source("ftp")


def test_a_registered_source_is_made_by_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_REGISTERED", {})
    assert "memory" not in source_keys()
    register_source("memory", MemorySource)
    assert "memory" in source_keys() and "disk" in source_keys()
    made = create_source("memory")
    assert isinstance(made, MemorySource) and made is not create_source("memory")


def test_the_base_imports_no_implementation() -> None:
    tree = ast.parse(Path(base.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "router.skills.sources.disk" not in imported
    assert "router.skills.discovery" not in imported  # nor the scanner
