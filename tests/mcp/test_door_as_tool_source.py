"""A streamable-HTTP MCP server as a skill source: the door itself, over HTTP on loopback,
listed by ``discovery.mcp_servers`` given its URL; an unreachable URL is a diagnostic. And an
indexed MCP tool is no skill:// resource nor Skills extension entry of the door."""

from __future__ import annotations

from pathlib import Path

from router.config import DiscoveryConfig
from router.mcp.backend import EngineBackend
from router.skills.mcp_tools import tool_skills
from router.skills.model import SkillKind
from router.skills.sources.base import create_source
from tests.support.indexes import build_hash_index, cli_index, open_engine
from tests.support.mcp_doors import http_door
from tests.support.ports import free_port
from tests.support.skills import skill_record, write_catalog


def config(*servers: str) -> DiscoveryConfig:
    return DiscoveryConfig(project_dir=None, home_dir=None, mcp_servers=servers,
                           mcp_timeout_seconds=60.0)


def test_a_streamable_http_server_s_tools_are_indexed_by_its_url(tmp_path: Path) -> None:
    index = tmp_path / "index"
    cli_index(write_catalog(tmp_path / "skills"), index)
    with http_door(["--index", str(index)]) as url:
        found = create_source().discover(config(f"door={url}"))
    tools = {s.api_name: s for s in found.skills}
    assert {"search_skills", "activate_skill", "read_skill_resource"} <= set(tools)
    search = tools["search_skills"]
    assert (search.catalog, search.name, search.kind) == ("door", "search-skills",
                                                          SkillKind.MCP_TOOL)
    assert search.parameters is not None and "query" in search.parameters["properties"]
    assert found.diagnostics == ()


def test_an_unreachable_url_is_a_diagnostic() -> None:
    found = create_source().discover(config(f"gone=http://127.0.0.1:{free_port()}/mcp"))
    assert found.skills == ()
    [problem] = found.diagnostics
    assert problem.catalog == "gone" and "was not indexed" in problem.message


def test_an_indexed_tool_is_no_skill_resource_of_the_door(tmp_path: Path) -> None:
    tools, _ = tool_skills({"git": [{"name": "git_log", "description": "Shows the commit logs.",
                                     "inputSchema": {"type": "object"}}]})
    skills = [skill_record("git-helper", "Writes git commit messages."), *tools]
    door = EngineBackend(open_engine(build_hash_index(skills, tmp_path / "index")))
    assert [f.name for f in door.skills()] == ["git-helper"]
    assert [e.name for e in door.skill_entries()] == ["git-helper"]
