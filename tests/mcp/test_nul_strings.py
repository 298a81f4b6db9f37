"""A NUL character (U+0000) in a tool's arguments or a read's URI is refused at the MCP door
naming the field (a tool error; invalid params for a read), on both doors; the same call
without it answers."""

from __future__ import annotations

import pytest
from mcp import Client, MCPError
from mcp_types import TextContent

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("search_skills", {"query": "merge pdfs\x00"}, "arguments.query"),
    ("activate_skill", {"name": "pdf\x00tools"}, "arguments.name"),
    ("read_skill_resource", {"name": "pdf-tools", "path": "a\x00.md"}, "arguments.path"),
])
async def test_a_nul_in_a_tool_argument_is_refused_naming_it(door: str, tool: str,
                                                             arguments: dict[str, str],
                                                             field: str) -> None:
    async with Client(door, mode="legacy") as client:
        refused = await client.call_tool(tool, arguments)
        assert refused.is_error and isinstance(refused.content[0], TextContent)
        assert refused.content[0].text.startswith(f"{field} holds a NUL character")
        answered = await client.call_tool("search_skills", {"query": "merge pdfs"})
        assert not answered.is_error


async def test_a_nul_in_a_resource_uri_is_invalid_params(door: str) -> None:
    async with Client(door, mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("skill://pdf-tools/SKILL.md\x00")
        assert str(caught.value).startswith("uri holds a NUL character"), caught.value
