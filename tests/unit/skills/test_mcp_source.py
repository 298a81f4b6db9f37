"""MCP servers as a skill source, against two real servers over stdio (``tests.support.
mcp_servers``): their tools are callable skills of their catalogs beside the folders; a server
that fails or hangs is a diagnostic; the tools are served from the record the build kept."""

from __future__ import annotations

import pytest

from router.config import DiscoveryConfig
from router.errors import NotFound, StaleFile
from router.skills.mcp_tools import TOOL_FILE, tool_document
from router.skills.model import DiscoveryResult, Level, SkillKind
from router.skills.sources.base import create_source
from tests.support import REPO
from tests.support.mcp_servers import (  # noqa: F401  (fixtures)
    FS_TOOLS,
    GIT_TOOLS,
    fs_server,
    git_server,
    mcp_repo,
)

DEMO = str(REPO / "examples" / "skills")


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
