"""A user-only skill (``disable-model-invocation``) never reaches the model through the door's
tools, over both HTTP doors (in-process and proxying a real gRPC server); the host-facing reads
keep serving it with its frontmatter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from router.door.backend import EngineBackend
from router.mcp.sessions import DoorSessions
from router.mcp.tools import SkillTools
from tests.support.indexes import index_folder, open_engine
from tests.support.mcp_doors import write_door_tree

pytestmark = pytest.mark.anyio

BODY = "Ask before deploying."  # the user-only skill's instructions (tests.support.skills)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def names(result: CallToolResult) -> dict[str, str]:
    return {s["name"]: s["reason"]
            for s in result.structured_content["skills"]}  # type: ignore[index]


async def test_a_slash_name_in_the_models_query_neither_sends_nor_activates_it(
        door: str) -> None:
    async with Client(door, mode="legacy") as client:
        named = await client.call_tool("search_skills", {"query": "/user-only v1.2.3"})
        later = await client.call_tool("search_skills",
                                       {"query": "deploy to production on explicit request"})
        refused = await client.call_tool("activate_skill", {"name": "user-only"})
        usable = await client.call_tool("search_skills",
                                        {"query": "/git-helper write the commit message"})
    assert not named.is_error and BODY not in text(named) and "<skill_content" not in text(named)
    assert "user-only" not in names(named) and "user-only" not in names(later)
    assert "user-only" not in text(later)
    assert refused.is_error and BODY not in text(refused)
    assert names(usable)["git-helper"] == "explicit"  # a model-invocable /name still works


@pytest.mark.parametrize("path", ["SKILL.md", "./SKILL.md", "references/../SKILL.md"])
async def test_read_skill_resource_refuses_its_instructions(door: str, path: str) -> None:
    async with Client(door, mode="legacy") as client:
        read = await client.call_tool("read_skill_resource", {"name": "user-only", "path": path})
        other = await client.call_tool("read_skill_resource",
                                       {"name": "pdf-tools", "path": "SKILL.md"})
    assert read.is_error and BODY not in text(read)
    assert not other.is_error and "Extracts text and tables" in text(other)


async def test_the_host_still_reads_it_with_its_frontmatter(door: str) -> None:
    async with Client(door, mode="legacy") as client:
        found = await client.read_resource("skill://user-only/SKILL.md")
    content = found.contents[0]
    assert BODY in getattr(content, "text", "")
    assert "disable-model-invocation: true" in getattr(content, "text", "")


async def test_a_bundled_copy_of_its_instructions_is_refused_too(tmp_path: Path) -> None:
    tree = write_door_tree(tmp_path)
    skill = tree.root / "user-only"
    shutil.copyfile(skill / "SKILL.md", skill / "copy.md")  # recorded at build like any file
    (skill / "notes.md").write_text("# Notes\n\nA bundled file the model may read.\n")
    engine = open_engine(index_folder(tree.root, tree.index))
    tools = SkillTools(EngineBackend(engine), DoorSessions())
    with pytest.raises(ToolError, match="only be started by the user"):
        await tools.read("user-only", "copy.md")
    notes = await tools.read("user-only", "notes.md")
    assert "bundled file the model may read" in text(notes)
