"""The disk source (router.skills.sources.disk) runs the shared skill-source contract, and keeps
the disk's own refusals: links out of a skill and hard links are neither listed nor served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from router.errors import NotFound
from router.skills.discovery import discover
from router.skills.sources.base import SkillSource, create_source
from router.skills.sources.disk import DiskSource
from tests.support.skill_source_contract import (
    CATALOG,
    FolderSourceContract,
)


class TestDiskSource(FolderSourceContract):
    @pytest.fixture
    def source(self) -> SkillSource:
        return create_source("disk")


def test_the_disk_key_makes_the_disk_source() -> None:
    assert isinstance(create_source("disk"), DiskSource)
    assert create_source("disk").key == "disk"


def test_discovery_is_todays_scan(tmp_path: Path) -> None:
    config = TestDiskSource().publish(tmp_path, CATALOG)
    assert DiskSource().discover(config) == discover(config)


def test_links_out_of_the_skill_and_hard_links_are_not_served(tmp_path: Path) -> None:
    config = TestDiskSource().publish(tmp_path, CATALOG)
    source = DiskSource()
    pdf = next(s for s in source.discover(config).skills if s.name == "pdf-tools")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the skill's\n")
    os.symlink(outside, Path(pdf.base_dir) / "leak.txt")
    os.link(outside, Path(pdf.base_dir) / "hard.txt")
    os.symlink(Path(pdf.base_dir) / "notes.txt", Path(pdf.base_dir) / "inner.txt")
    assert source.list_files(pdf).files == ("data/blob.bin", "inner.txt", "notes.txt",
                                            "scripts/extract.py")
    assert source.read(pdf, "inner.txt") == CATALOG["pdf-tools"]["notes.txt"]
    for path in ("leak.txt", "hard.txt"):
        with pytest.raises(NotFound):
            source.read(pdf, path)
    assert "hard.txt" not in [f.path for f in source.digest(pdf).files]
