"""A hard link inside a skill folder to a file outside it is neither listed nor served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from router.errors import NotFound
from router.skills.resources import read_resource, scan_resources


def test_a_hard_linked_file_is_not_listed_or_served(tmp_path: Path) -> None:
    secret = tmp_path / "outside/credentials.txt"
    secret.parent.mkdir()
    secret.write_text("password=hunter2\n")
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\n")
    (skill / "notes.txt").write_text("fine\n")
    os.link(secret, skill / "leak.txt")
    assert scan_resources(str(skill)).files == ("notes.txt",)
    assert read_resource(str(skill), "notes.txt")[0] == b"fine\n"
    with pytest.raises(NotFound, match="hard-linked"):
        read_resource(str(skill), "leak.txt")
