"""``mcp --audit-log``: a door serving an index in-process writes one JSON line per backend
call (a failed one too) with its SkillRouter method, code, index version, the caller's trace
id and the skills handed out at the digest the index recorded; no query text; mode 0600."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from router.engine import Engine
from tests.support.mcp_doors import running_door
from tests.support.skills import Tree

TRACE = "5bf92f3577b34da6a3ce929d0e0e4737"
QUERY = "extract the tables from the PDF of our hush-hush acquisition"


@pytest.mark.anyio
async def test_one_line_per_call_with_the_skills_and_their_digests(
        tree: Tree, tree_engine: Engine, tmp_path: Path) -> None:
    log = tmp_path / "door-audit.jsonl"
    with running_door(["--index", str(tree.index), "--audit-log", str(log)]) as door:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http:
            http.headers["traceparent"] = f"00-{TRACE}-b7ad6b7169203331-01"
            async with Client(streamable_http_client(door.url, http_client=http),
                              mode="legacy") as client:
                found = await client.call_tool("search_skills", {"query": QUERY})
                await client.call_tool("activate_skill", {"name": "pdf-tools"})
                await client.call_tool("read_skill_resource",
                                       {"name": "pdf-tools", "path": "scripts/extract.py"})
                missing = await client.call_tool("activate_skill", {"name": "no-such-skill"})
    assert not found.is_error and missing.is_error
    text = log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "hush-hush" not in text and "acquisition" not in text
    every = [json.loads(line) for line in text.splitlines()]
    # the door lists the skills too (the failed activation's suggestions): lines of their own
    lines = [line for line in every if not line["method"].endswith("/ListSkills")]
    assert all("skills" not in line for line in every if line not in lines)
    methods = [line["method"].rsplit("/", 1)[1] for line in lines]
    assert methods == ["Route", "Activate", "ReadResource", "Activate"]
    digest = "sha256:" + hashlib.sha256(
        (tree.root / "pdf-tools" / "SKILL.md").read_bytes()).hexdigest()
    pdf = {"name": "pdf-tools", "catalog": "default", "digest": digest}
    route, activate, read, failed = lines
    assert pdf in route["skills"] and activate["skills"] == [pdf] and read["skills"] == [pdf]
    assert [line["code"] for line in lines] == ["OK", "OK", "OK", "NOT_FOUND"]
    assert failed["skills"] == []
    assert all(line["trace_id"] == TRACE and line["door"] == "mcp" for line in lines)
    assert all(line["index_version"] == tree_engine.snapshot.info.version for line in lines)
    assert all(line["principal"] == "" and line["acting_for"] is None for line in lines)
