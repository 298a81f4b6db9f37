"""MCP servers as a skill source, against two real servers over stdio (``tests.support.
mcp_servers``): their tools are callable skills of their catalogs beside the folders; a server
that fails or hangs is a diagnostic; the tools are served from the record the build kept. And
the skill-source contract on the MCP source alone, against a server whose tools are the
contract's catalog (``tests/support/catalog_mcp_server.py``)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from router.config import DiscoveryConfig
from router.errors import NotFound, StaleFile
from router.skills.mcp_tools import TOOL_FILE, tool_document
from router.skills.model import DiscoveryResult, Level, Skill, SkillKind
from router.skills.sources.base import SkillSource, create_source
from tests.support import REPO
from tests.support.mcp_servers import (  # noqa: F401  (fixtures)
    FS_TOOLS,
    GIT_TOOLS,
    fs_server,
    git_server,
    mcp_repo,
)
from tests.support.skill_source_contract import Catalog, SkillSourceContract

DEMO = str(REPO / "examples" / "skills")
SERVER = REPO / "tests" / "support" / "catalog_mcp_server.py"


def config(*servers: str, timeout: float = 60.0) -> DiscoveryConfig:
    return DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=(DEMO,),
                           mcp_servers=servers, mcp_timeout_seconds=timeout)


@pytest.fixture(scope="module")
def found(git_server: str, fs_server: str) -> DiscoveryResult:  # noqa: F811
    return create_source().discover(config(git_server, fs_server))


def test_every_tool_of_both_servers_is_a_callable_skill_beside_the_folders(
        found: DiscoveryResult) -> None:
    by_catalog: dict[str, list[str]] = {}
    for skill in found.skills:
        by_catalog.setdefault(skill.catalog, []).append(skill.api_name)
    assert len(by_catalog["git"]) == GIT_TOOLS and "git_log" in by_catalog["git"]
    assert len(by_catalog["fs"]) == FS_TOOLS and "list_directory" in by_catalog["fs"]
    assert "convert-timezone" in by_catalog["default"]
    assert [d for d in found.diagnostics if d.catalog in ("git", "fs")] == []
    listing = next(s for s in found.skills if s.api_name == "list_directory")
    assert listing.kind is SkillKind.MCP_TOOL and listing.name == "list-directory"
    assert listing.parameters is not None and "path" in listing.parameters["properties"]
    assert listing.annotations.get("readOnlyHint") is True


def test_a_server_that_fails_or_hangs_is_a_diagnostic_and_the_rest_is_found() -> None:
    found = create_source().discover(config("gone=/nonexistent/mcp-server", "mute=sleep 600",
                                            timeout=2.0))
    assert {s.catalog for s in found.skills} == {"default"} and len(found.skills) == 49
    problems = {d.catalog: d for d in found.diagnostics if d.catalog in ("gone", "mute")}
    assert problems["gone"].level is Level.ERROR and "/nonexistent/mcp-server" in \
        problems["gone"].message
    assert "within 2 s" in problems["mute"].message


def test_a_tool_is_served_from_its_recorded_document(found: DiscoveryResult) -> None:
    source = create_source()
    skill = next(s for s in found.skills if s.api_name == "git_log")
    recorded = source.digest_all([skill])[skill.key]
    assert [f.path for f in recorded.files] == [TOOL_FILE]
    assert source.read_skill_file(skill, recorded=recorded) == tool_document(skill)
    assert source.list_files(skill).files == ()
    with pytest.raises(NotFound):
        source.read(skill, "README.md", recorded=recorded)
    other = next(s for s in found.skills if s.api_name == "git_status")
    with pytest.raises(StaleFile):  # a record that is not this tool's is refused
        source.read_skill_file(skill, recorded=source.digest(other))


class TestMcpSource(SkillSourceContract):
    """The contract on MCP servers alone: each skill of the catalog a tool of a server started
    for the test; a tool bundles no files and its skill file is its recorded document."""

    BUNDLES_FILES = False
    FILES_CHANGE = False  # served from the record the build kept, never from the server
    SKILL_FILE = TOOL_FILE
    BROKEN_AT = "catalog/broken"

    @pytest.fixture
    def source(self) -> SkillSource:
        return create_source("mcp")

    def skill_file(self, skill: Skill) -> bytes:
        return tool_document(skill)

    def publish(self, where: Path, catalog: Catalog) -> DiscoveryConfig:
        named = {}
        for folder, files in catalog.items():
            said = re.search(r"^description: (.*)$", files["SKILL.md"].decode(), re.M)
            named[folder] = said.group(1) if said else ""
        tools = where / "tools.json"
        tools.write_text(json.dumps(named), encoding="utf-8")
        command = shlex.join([sys.executable, str(SERVER), str(tools)])
        return DiscoveryConfig(project_dir=None, home_dir=None,
                               mcp_servers=(f"catalog={command}",), mcp_timeout_seconds=60.0)
