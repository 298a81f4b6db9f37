"""The MCP door over streamable HTTP, driven by the SDK's own client: in-process over the index
and as a proxy to a real gRPC server (the ``door`` fixture runs every test against both)."""

from __future__ import annotations

import base64
import time

import anyio
import pytest
from mcp import Client, MCPError
from mcp_types import BlobResourceContents, CallToolResult, EmbeddedResource, TextContent

from tests.support.indexes import index_folder
from tests.support.learning import positives
from tests.support.mcp_doors import BINARY, http_door
from tests.support.skills import TREE_PDF_BODY as PDF_BODY
from tests.support.skills import Tree, add_skill, write_tree

pytestmark = pytest.mark.anyio

TRAVERSALS = [
    "../secret.txt",  # parent segment
    "scripts/../../secret.txt",
    "/etc/passwd",  # absolute
    "C:/Windows/win.ini",  # drive letter
    "scripts\\extract.py",  # backslash
    "..\\secret.txt",
    "%2e%2e/secret.txt",  # percent-encoded
    "%252e%252e/secret.txt",  # encoded twice
    "scripts/%2F..%2F..%2Fsecret.txt",
    "scripts/extract.py\x00.md",  # NUL
    "leak.txt",  # symlink to a file outside the skill (escape-links has it; pdf-tools not)
]


def session(url: str) -> Client:
    """One MCP session as a host opens it (initialize handshake, Mcp-Session-Id)."""
    return Client(url, mode="legacy")


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_tools_are_listed_with_descriptions_for_a_model(door: str) -> None:
    async with session(door) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search_skills", "activate_skill", "read_skill_resource"}
    search = tools["search_skills"]
    assert "start of every new task" in (search.description or "")
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["top_k"]["default"] == 5
    assert search.output_schema is not None and "skills" in search.output_schema["properties"]
    assert "activate_skill" in (search.description or "")
    assert "read_skill_resource" in (tools["activate_skill"].description or "")


async def test_search_returns_the_catalog_and_structured_skills(door: str) -> None:
    async with session(door) as client:
        result = await client.call_tool("search_skills",
                                        {"query": "extract the tables from this PDF file"})
    assert not result.is_error
    assert "<available_skills>" in text(result) and "activate_skill" in text(result)
    skills = result.structured_content["skills"]  # type: ignore[index]
    assert skills[0]["name"] == "pdf-tools" and skills[0]["reason"] == "retrieved"
    assert skills[0]["description"].startswith("Extracts text and tables")
    assert isinstance(skills[0]["score"], float)
    assert "user-only" not in text(result)  # never in a model-facing catalog


async def test_an_off_topic_search_is_an_empty_catalog_not_an_error(door: str) -> None:
    async with session(door) as client:
        result = await client.call_tool("search_skills",
                                        {"query": "bake a sourdough loaf with rye flour"})
    assert not result.is_error
    assert text(result).startswith("No skill fits this request: continue without one.")
    assert result.structured_content["skills"] == []  # type: ignore[index]


async def test_a_bad_top_k_is_refused_by_the_schema(door: str) -> None:
    async with session(door) as client:
        result = await client.call_tool("search_skills", {"query": "pdf", "top_k": 0})
    assert result.is_error


async def test_activation_is_deduplicated_within_a_session_not_across(door: str) -> None:
    async with session(door) as first, session(door) as second:
        body = await first.call_tool("activate_skill", {"name": "pdf-tools"})
        again = await first.call_tool("activate_skill", {"name": "pdf-tools"})
        other = await second.call_tool("activate_skill", {"name": "pdf-tools"})
        listed = await first.call_tool("search_skills", {"query": "merge two PDF documents"})
    assert not body.is_error and text(body).startswith('<skill_content name="pdf-tools">')
    assert PDF_BODY.splitlines()[0] in text(body)
    assert "<file>scripts/extract.py</file>" in text(body)
    assert body.structured_content["already_active"] is False  # type: ignore[index]
    assert not again.is_error and "already active" in text(again)
    assert "<skill_content" not in text(again) and PDF_BODY.splitlines()[0] not in text(again)
    assert again.structured_content["already_active"] is True  # type: ignore[index]
    assert text(other).startswith('<skill_content name="pdf-tools">')
    reasons = {s["name"]: s["reason"] for s in listed.structured_content["skills"]}  # type: ignore[index]
    assert reasons["pdf-tools"] == "active"


async def test_a_query_naming_a_skill_activates_it_as_route_does(door: str) -> None:
    async with session(door) as client:
        found = await client.call_tool("search_skills",
                                       {"query": "/git-helper write the commit message"})
        again = await client.call_tool("activate_skill", {"name": "git-helper"})
    assert "<available_skills>" in text(found)
    assert '<skill_content name="git-helper">' in text(found)  # the body, once
    reasons = {s["name"]: s["reason"] for s in found.structured_content["skills"]}  # type: ignore[index]
    assert reasons["git-helper"] == "explicit"
    assert "already active" in text(again)


async def test_user_only_unknown_and_disabled_skills_are_tool_errors(door: str) -> None:
    async with session(door) as client:
        user_only = await client.call_tool("activate_skill", {"name": "user-only"})
        unknown = await client.call_tool("activate_skill", {"name": "pdf-tool"})
        disabled = await client.call_tool("activate_skill", {"name": "switched-off"})
    assert user_only.is_error and "only be activated by the user" in text(user_only)
    assert unknown.is_error and "did you mean: pdf-tools" in text(unknown)
    assert disabled.is_error and "disabled" in text(disabled)


async def test_a_bundled_file_is_read_as_text_or_blob(door: str) -> None:
    async with session(door) as client:
        script = await client.call_tool("read_skill_resource",
                                        {"name": "pdf-tools", "path": "scripts/extract.py"})
        logo = await client.call_tool("read_skill_resource",
                                      {"name": "pdf-tools", "path": "assets/logo.png"})
        missing = await client.call_tool("read_skill_resource",
                                         {"name": "pdf-tools", "path": "scripts/nope.py"})
        big = await client.call_tool("read_skill_resource",
                                     {"name": "big-data", "path": "data.bin"})
    assert not script.is_error and text(script) == "print('tables')\n"
    block = logo.content[0]
    assert isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents)
    assert base64.b64decode(block.resource.blob) == BINARY
    assert block.resource.mime_type == "image/png"
    assert str(block.resource.uri) == "skill://pdf-tools/assets/logo.png"
    assert missing.is_error and "no resource" in text(missing)
    assert big.is_error and "limit" in text(big)


async def test_every_traversal_shape_is_refused(door: str) -> None:
    refused: dict[str, str] = {}
    async with session(door) as client:
        for path in TRAVERSALS:
            skill = "escape-links" if path == "leak.txt" else "pdf-tools"
            result = await client.call_tool("read_skill_resource", {"name": skill, "path": path})
            assert result.is_error, f"{path!r} was served"
            refused[path] = text(result)
    assert not any("TOP SECRET" in message or "root:" in message for message in refused.values())
    assert "'..'" in refused["../secret.txt"] and "'..'" in refused["%252e%252e/secret.txt"]
    assert "absolute" in refused["/etc/passwd"] and "backslash" in refused["scripts\\extract.py"]
    assert "NUL" in refused["scripts/extract.py\x00.md"]


async def test_resources_list_and_read_without_activating(door: str) -> None:
    async with session(door) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
        skill_md = await client.read_resource("skill://git-helper/SKILL.md")
        logo = await client.read_resource("skill://pdf-tools/assets/logo.png")
        activated = await client.call_tool("activate_skill", {"name": "git-helper"})
        with pytest.raises(MCPError, match=r"\.\."):
            await client.read_resource("skill://pdf-tools/%2e%2e/%2e%2e/secret.txt")
        with pytest.raises(MCPError):
            await client.read_resource("skill://switched-off/SKILL.md")
    assert {"skill://pdf-tools/SKILL.md", "skill://pdf-tools/scripts/extract.py",
            "skill://pdf-tools/references/guide.md", "skill://book-meeting/manifest.json",
            "skill://user-only/SKILL.md"} <= set(listed)
    assert not any("switched-off" in uri or "leak.txt" in uri for uri in listed)
    assert listed["skill://pdf-tools/SKILL.md"].mime_type == "text/markdown"
    assert templates[0].uri_template == "skill://{name}/{+path}"
    content = skill_md.contents[0]
    assert getattr(content, "text", "").startswith("---\nname: git-helper")
    blob = logo.contents[0]
    assert isinstance(blob, BlobResourceContents) and base64.b64decode(blob.blob) == BINARY
    # Reading SKILL.md did not activate the skill: the first activation still sends the body.
    assert text(activated).startswith('<skill_content name="git-helper">')


async def test_a_request_without_a_session_has_no_memory(index_door: str) -> None:
    """The 2026-07-28 protocol sends no Mcp-Session-Id: nothing to de-duplicate on."""
    async with Client(index_door) as client:  # negotiates the newest protocol
        first = await client.call_tool("activate_skill", {"name": "git-helper"})
        second = await client.call_tool("activate_skill", {"name": "git-helper"})
        assert client.protocol_version == "2026-07-28"
    assert text(first).startswith('<skill_content name="git-helper">')
    assert text(second).startswith('<skill_content name="git-helper">')


async def test_the_in_process_door_picks_up_a_new_index_version(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    fresh = write_tree(tmp_path_factory.mktemp("reindexed"))
    index_folder(fresh.root, fresh.index)
    env = {"SKILL_ROUTER_SERVER_INDEX_POLL_SECONDS": "0.2"}
    with http_door(["--index", str(fresh.index)], env) as url:
        async with session(url) as client:
            before = await client.call_tool("search_skills", {"query": "water the office plants"})
            add_skill(fresh.root, "plant-care", "Waters the office plants on schedule.")
            index_folder(fresh.root, fresh.index)  # a new version becomes CURRENT
            deadline = time.monotonic() + 60
            while True:  # until the door serves the new version (observed, not a fixed wait)
                after = await client.call_tool("search_skills",
                                               {"query": "water the office plants"})
                names = [s["name"] for s in after.structured_content["skills"]]  # type: ignore[index]
                if "plant-care" in names or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.1)
    assert "plant-care" not in text(before)
    assert names[0] == "plant-care"


async def test_an_activation_counts_as_traffic_feedback_for_the_search_that_showed_it(
        door: str, tree: Tree) -> None:
    query = f"extract the tables from these PDF invoices (case {door.rsplit(':', 1)[1]})"
    async with session(door) as client:
        found = await client.call_tool("search_skills", {"query": query})
        await client.call_tool("activate_skill", {"name": "pdf-tools"})
    assert found.structured_content["skills"][0]["name"] == "pdf-tools"  # type: ignore[index]
    learned = [(s, skill) for s, q, skill in positives(tree.index) if q == query]
    assert len(learned) == 1 and learned[0][1] == "pdf-tools"
    assert learned[0][0].startswith("mcp-")  # the door's own session id, not the host's
