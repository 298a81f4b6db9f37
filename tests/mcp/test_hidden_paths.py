"""``server.expose_paths: false`` through the MCP door: neither the door over the index
(``mcp --index DIR --hide-paths``) nor the door proxying a server that hides its paths hands the
model or the host an absolute path of the server's disk; the tools and skill:// reads still
work."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from pydantic import BaseModel

from tests.support.indexes import cli_index, open_engine
from tests.support.mcp_doors import http_door, write_door_tree
from tests.support.servers import start_server
from tests.support.skills import Tree
from tests.support.skills_ext import call

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def hidden_tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    tree = write_door_tree(tmp_path_factory.mktemp("hidden-paths"))
    cli_index(tree.root, tree.index)  # records the discovery settings
    return tree


@pytest.fixture(scope="module", params=["index", "proxy"])
def hidden_door(request: pytest.FixtureRequest, hidden_tree: Tree) -> Iterator[str]:
    """Each door in turn, hiding the server's paths."""
    if request.param == "index":
        with http_door(["--index", str(hidden_tree.index), "--hide-paths"]) as url:
            yield url
        return
    server = start_server(open_engine(hidden_tree.index), expose_paths=False)
    try:
        with http_door(["--target", f"127.0.0.1:{server.port}"]) as url:
            yield url
    finally:
        server.stop(0)


def dumped(*results: BaseModel | dict[str, object]) -> str:
    return json.dumps([r if isinstance(r, dict) else r.model_dump(mode="json")
                       for r in results])


async def test_no_tool_or_resource_names_the_servers_disk(hidden_door: str,
                                                          hidden_tree: Tree) -> None:
    async with Client(hidden_door, mode="legacy") as client:
        searched = await client.call_tool("search_skills",
                                          {"query": "extract the tables from a PDF"})
        named = await client.call_tool("search_skills", {"query": "/git-helper write it"})
        activated = await client.call_tool("activate_skill", {"name": "pdf-tools"})
        read = await client.call_tool("read_skill_resource",
                                      {"name": "pdf-tools", "path": "scripts/extract.py"})
        missing = await client.call_tool("read_skill_resource",
                                         {"name": "pdf-tools", "path": "no/such.md"})
        listed = await client.list_resources()
        skill_md = await client.read_resource("skill://pdf-tools/SKILL.md")
        extension = await call(client, "skills/list")
    everything = dumped(searched, named, activated, read, missing, listed, skill_md, extension)
    base = hidden_tree.root.parent
    assert str(base) not in everything and os.path.realpath(base) not in everything
    assert "<location>pdf-tools/SKILL.md</location>" in dumped(searched)
    assert "Skill directory: pdf-tools" in dumped(activated)
    assert "Skill directory: git-helper" in dumped(named)
    assert not activated.is_error and "pdfplumber" in dumped(activated)
    assert not read.is_error and "print('tables')" in dumped(read)
    assert missing.is_error
    assert "pdfplumber" in getattr(skill_md.contents[0], "text", "")


async def test_the_default_door_still_names_the_skill_folder(tmp_path: Path) -> None:
    tree = write_door_tree(tmp_path)
    cli_index(tree.root, tree.index)
    with http_door(["--index", str(tree.index)]) as url:
        async with Client(url, mode="legacy") as client:
            activated = await client.call_tool("activate_skill", {"name": "pdf-tools"})
    assert f"Skill directory: {tree.root / 'pdf-tools'}" in dumped(activated)
