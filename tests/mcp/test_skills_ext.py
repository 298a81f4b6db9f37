"""The Skills extension (SEP-2640) over streamable HTTP, driven by the SDK's client against both
doors (in-process and proxy): the declaration, skills/list and skills/get entries whose digests
match the bytes resources/read serves, visibility, errors, and resources/directory/read."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp_types import BlobResourceContents, TextResourceContents

from router.mcp.skills_ext import CACHE_SCOPE, IDENTIFIER, TTL_MS
from tests.support.skills_ext import call

pytestmark = pytest.mark.anyio

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def session(url: str) -> Client:
    return Client(url, mode="legacy")


async def read_bytes(client: Client, uri: str) -> bytes:
    contents = (await client.read_resource(uri)).contents[0]
    if isinstance(contents, TextResourceContents):
        return contents.text.encode("utf-8")
    assert isinstance(contents, BlobResourceContents)
    return base64.b64decode(contents.blob)


async def test_the_extension_is_declared_with_directory_read(door: str) -> None:
    async with session(door) as client:
        declared = client.server_capabilities.extensions or {}
    assert declared.get(IDENTIFIER) == {"directoryRead": True}


async def test_listed_entries_carry_digests_that_match_what_is_served(door: str) -> None:
    async with session(door) as client:
        listed = await call(client, "skills/list")
        assert (listed["ttlMs"], listed["cacheScope"]) == (TTL_MS, CACHE_SCOPE)
        assert "nextCursor" not in listed  # one page for this small tree
        skills = {s["frontmatter"]["name"]: s for s in listed["skills"]}
        # routable SKILL.md skills only: no manifest skill, no user-only, disabled, or a skill
        # whose files exceed the bounds (big-data bundles a file over the 10 MiB cap)
        assert set(skills) == {"pdf-tools", "git-helper", "model-only", "escape-links"}
        pdf = skills["pdf-tools"]
        assert pdf["uri"] == "skill://pdf-tools/SKILL.md"
        assert pdf["frontmatter"]["description"].startswith("Extracts text and tables")
        uris = [r["uri"] for r in pdf["resources"]]
        assert uris[0] == pdf["uri"]
        assert set(uris) == {"skill://pdf-tools/SKILL.md", "skill://pdf-tools/scripts/extract.py",
                             "skill://pdf-tools/references/guide.md",
                             "skill://pdf-tools/assets/logo.png"}
        for resource in pdf["resources"]:
            assert DIGEST.match(resource["digest"])
            data = await read_bytes(client, resource["uri"])
            assert len(data) == resource["size"]
            assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
        # the symlink leaving escape-links is no file of the skill
        assert [r["uri"] for r in skills["escape-links"]["resources"]] == [
            "skill://escape-links/SKILL.md"]


async def test_get_answers_unlisted_skills_and_refuses_what_is_not_served(door: str) -> None:
    async with session(door) as client:
        got = await call(client, "skills/get", uri="skill://user-only/SKILL.md")
        assert got["skill"]["frontmatter"]["name"] == "user-only"
        assert got["skill"]["frontmatter"]["disable-model-invocation"] is True
        assert (got["ttlMs"], got["cacheScope"]) == (TTL_MS, CACHE_SCOPE)
        for uri, says in [("skill://no-such/SKILL.md", "no skill is served"),
                          ("skill://switched-off/SKILL.md", "no skill is served"),
                          ("skill://book-meeting/SKILL.md", "manifest.json"),
                          ("skill://big-data/SKILL.md", "limits"),
                          ("skill://pdf-tools/scripts/extract.py", "no skill is served"),
                          ("file:///etc/passwd", "no skill is served")]:
            with pytest.raises(MCPError) as caught:
                await call(client, "skills/get", uri=uri)
            assert caught.value.error.code == -32602, uri
            assert says in caught.value.error.message, uri


async def test_directory_read_lists_direct_children(door: str) -> None:
    async with session(door) as client:
        root = await call(client, "resources/directory/read", uri="skill://pdf-tools")
        children = {r["name"]: r for r in root["resources"]}
        assert set(children) == {"SKILL.md", "scripts", "references", "assets"}
        assert children["scripts"] == {"uri": "skill://pdf-tools/scripts", "name": "scripts",
                                       "mimeType": "inode/directory"}
        assert children["SKILL.md"]["mimeType"] == "text/markdown"
        scripts = await call(client, "resources/directory/read", uri="skill://pdf-tools/scripts")
        assert [r["uri"] for r in scripts["resources"]] == [
            "skill://pdf-tools/scripts/extract.py"]
        for uri in ["skill://pdf-tools/SKILL.md", "skill://pdf-tools/nothing",
                    "skill://pdf-tools/scripts/", "skill://pdf-tools/../git-helper",
                    "skill://pdf-tools/%2e%2e", "skill://escape-links/linked",
                    "skill://no-such"]:
            with pytest.raises(MCPError) as caught:
                await call(client, "resources/directory/read", uri=uri)
            assert caught.value.error.code == -32602, uri


async def test_a_bad_cursor_is_invalid_params(door: str) -> None:
    async with session(door) as client:
        with pytest.raises(MCPError) as caught:
            await call(client, "skills/list", cursor="not a cursor!")
    assert caught.value.error.code == -32602


def test_pages_follow_next_cursor() -> None:
    from router.mcp import skills_ext

    items = [{"n": i} for i in range(skills_ext.PAGE_SIZE * 2 + 5)]
    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page, more = skills_ext._page(items, cursor)
        seen.extend(page)
        cursor = more.get("nextCursor")
        if cursor is None:
            break
    assert seen == items

