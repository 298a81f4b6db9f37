"""The MCP door on an index in object storage (``mcp --index s3://...``, an S3 server on
loopback): its skills are served from the version's own files, with the skills folder gone."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent

from router.cli import main
from tests.support.indexes import index_argv
from tests.support.mcp_doors import stdio_params
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.skills import write_catalog


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.anyio
async def test_the_door_serves_a_bucket_index_with_no_skills_folder(
        tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "publisher-cache"))
    skills = write_catalog(tmp_path / "skills", 3)
    (skills / "skill-1" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    argv = index_argv(skills, Path("unused"))
    argv[argv.index("--out") + 1] = s3.url()
    assert main(argv) == 0
    shutil.rmtree(skills)
    monkeypatch.setenv("SKILL_ROUTER_INDEX_CACHE_DIR", str(tmp_path / "door-cache"))
    async with Client(stdio_params("--index", s3.url())) as host:
        done = await host.call_tool("activate_skill", {"name": "skill-1"})
        read = await host.call_tool("read_skill_resource", {"name": "skill-1",
                                                            "path": "guide.md"})
        guide = await host.read_resource("skill://skill-1/guide.md")
        own = await host.read_resource("skill://skill-1/SKILL.md")
    assert text(done).startswith('<skill_content name="skill-1">') and "Steps." in text(done)
    assert not read.is_error and "# Guide" in text(read)
    assert getattr(guide.contents[0], "text", "") == "# Guide\n"
    assert "# skill-1" in getattr(own.contents[0], "text", "")
