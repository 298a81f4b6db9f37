"""Several sources as one (``router.skills.sources.composite``): the default source (folders on
disk with the MCP servers' tools beside them) runs the shared skill-source contract, hands each
skill to the source of its kind, and the disk source knows nothing of MCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import DEFAULT_SOURCE
from router.skills.mcp_tools import TOOL_FILE, tool_document, tool_skills
from router.skills.model import Skill, SkillKind
from router.skills.sources.base import SkillSource, create_source
from router.skills.sources.composite import CompositeSource
from router.skills.sources.disk import DiskSource
from router.skills.sources.mcp import McpSource
from tests.support import REPO
from tests.support.skill_source_contract import (
    CATALOG,
    FolderSourceContract,
)


class TestCompositeSource(FolderSourceContract):
    @pytest.fixture
    def source(self) -> SkillSource:
        return create_source()


def _tool() -> Skill:
    listed = {"git": [{"name": "git_log", "description": "Shows the commit log.",
                       "inputSchema": {"type": "object", "properties": {}}}]}
    skills, problems = tool_skills(listed)
    assert problems == []
    return skills[0]


def test_the_default_source_is_the_folders_with_the_mcp_servers_tools() -> None:
    source = create_source()
    assert isinstance(source, CompositeSource) and source.key == DEFAULT_SOURCE == "disk+mcp"
    assert isinstance(source.primary, DiskSource)
    assert isinstance(source.by_kind[SkillKind.MCP_TOOL], McpSource)
    assert isinstance(create_source("disk"), DiskSource)


def test_each_skill_goes_to_the_source_of_its_kind(tmp_path: Path) -> None:
    source = create_source()
    found = source.discover(TestCompositeSource().publish(tmp_path, CATALOG))
    pdf, tool = next(s for s in found.skills if s.name == "pdf-tools"), _tool()
    assert tool.kind is SkillKind.MCP_TOOL
    assert source.read_skill_file(tool) == tool_document(tool)
    assert source.skill_file_name(tool) == TOOL_FILE and source.skill_file_name(pdf) == "SKILL.md"
    assert source.list_files(tool).files == () and source.list_files(pdf).files
    both = source.digest_all([pdf, tool])
    assert list(both) == [pdf.key, tool.key]  # the folders' first, as the disk digests them
    assert [f.path for f in both[tool.key].files] == [TOOL_FILE]
    assert both[pdf.key] == DiskSource().digest(pdf)


def test_the_disk_source_knows_nothing_of_mcp() -> None:
    text = (REPO / "router" / "skills" / "sources" / "disk.py").read_text(encoding="utf-8")
    assert "mcp" not in text.lower()
    assert not hasattr(DiskSource(), "tools")
