"""Integrity through both doors: a file changed after the build is refused by resources/read,
read_skill_resource and activate_skill (never served, not from a stale copy either); the
extension keeps advertising what was recorded; after a Reindex the new bytes are served under
their new digest. The in-process door picks the new version up by polling the index folder."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp_types import TextContent, TextResourceContents

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.indexes import cli_index, open_engine
from tests.support.mcp_doors import http_door
from tests.support.servers import Served, serving
from tests.support.skills import write_catalog
from tests.support.skills_ext import call

pytestmark = pytest.mark.anyio

NOTES = b"# Notes\n\nKeep them short.\n"
EDITED = b"# Notes\n\nKeep them SHORT.\n"
POLL_DEADLINE = 60.0


@pytest.fixture()
def catalog(tmp_path: Path) -> tuple[Path, Path]:
    skills = write_catalog(tmp_path / "skills", 3)
    (skills / "skill-0" / "notes.md").write_bytes(NOTES)
    cli_index(skills, tmp_path / "index")
    return skills, tmp_path / "index"


@pytest.fixture()
def served(catalog: tuple[Path, Path]) -> Iterator[Served]:
    engine: Engine = open_engine(catalog[1])
    with serving(engine) as running:
        yield running


@pytest.fixture(params=["index", "proxy"])
def door(request: pytest.FixtureRequest, catalog: tuple[Path, Path],
         served: Served) -> Iterator[str]:
    args = (["--index", str(catalog[1])] if request.param == "index"
            else ["--target", f"127.0.0.1:{served.running.port}"])
    with http_door(args) as url:
        yield url


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def _notes_digest(client: Client) -> str:
    got: dict[str, Any] = await call(client, "skills/get", uri="skill://skill-0/SKILL.md")
    found = {r["uri"]: r["digest"] for r in got["skill"]["resources"]}
    return str(found["skill://skill-0/notes.md"])


async def test_a_changed_file_is_refused_until_reindex(door: str, catalog: tuple[Path, Path],
                                                      served: Served) -> None:
    skills, _ = catalog
    async with Client(door, mode="legacy") as client:
        assert await _notes_digest(client) == _sha(NOTES)
        (skills / "skill-0" / "notes.md").write_bytes(EDITED)
        skill_md = skills / "skill-0" / "SKILL.md"
        skill_md.write_bytes(skill_md.read_bytes() + b"Injected.\n")

        with pytest.raises(MCPError) as caught:
            await client.read_resource("skill://skill-0/notes.md")
        assert "notes.md" in caught.value.error.message
        assert "Reindex" in caught.value.error.message
        tool = await client.call_tool("read_skill_resource",
                                      {"name": "skill-0", "path": "notes.md"})
        assert tool.is_error
        activated = await client.call_tool("activate_skill", {"name": "skill-0"})
        assert activated.is_error
        block = activated.content[0]
        assert isinstance(block, TextContent) and "SKILL.md" in block.text
        assert await _notes_digest(client) == _sha(NOTES)  # what was recorded, not the disk

        assert served.stub.Reindex(pb.ReindexRequest(), timeout=60).swapped
        with anyio.fail_after(POLL_DEADLINE):  # the in-process door polls the index folder
            while await _notes_digest(client) != _sha(EDITED):
                await anyio.sleep(0.2)
        read = (await client.read_resource("skill://skill-0/notes.md")).contents[0]
        assert isinstance(read, TextResourceContents)
        assert read.text.encode() == EDITED
        activated = await client.call_tool("activate_skill", {"name": "skill-0"})
        assert not activated.is_error
        block = activated.content[0]
        assert isinstance(block, TextContent) and "Injected." in block.text
