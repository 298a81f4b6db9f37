"""The HTTP door with a principals file over an index of three catalogs holding one name:
each caller's resources/list, skill:// reads and search_skills show its view only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.catalogs import three_catalogs
from tests.support.mcp_doors import RunningDoor, running_door
from tests.support.principals import entry, write_principals


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDoor]:
    base = tmp_path_factory.mktemp("door-views")
    index = three_catalogs(base)
    write_principals(base / "door.yaml",
                     entry("pay", "tok-pay", ["route"], ["payments", "org"], deny=["internal-*"]),
                     entry("int", "tok-int", ["route"], ["internal", "org", "payments"]))
    with running_door(["--index", str(index), "--principals", str(base / "door.yaml")]) as door:
        yield door


async def _as(url: str, token: str) -> tuple[set[str], str, Any]:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        http.headers["Authorization"] = f"Bearer {token}"
        async with Client(streamable_http_client(url, http_client=http),
                          mode="legacy") as client:
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            deploy = await client.read_resource("skill://deploy/SKILL.md")
            found = await client.call_tool("search_skills",
                                           {"query": "audit internal ledgers for compliance"})
            return listed, getattr(deploy.contents[0], "text", ""), found


@pytest.mark.anyio
async def test_each_caller_lists_and_reads_its_own_view(door: RunningDoor) -> None:
    listed, deploy, found = await _as(door.url, "tok-pay")
    assert "skill://deploy/SKILL.md" in listed and "skill://refund-payment/SKILL.md" in listed
    assert not any("internal-audit" in uri for uri in listed)
    assert "Deploy the payments service" in deploy
    assert "internal-audit" not in str(found.structured_content)
    listed, deploy, found = await _as(door.url, "tok-int")
    assert "skill://internal-audit/SKILL.md" in listed
    assert "Deploy the internal service" in deploy
    assert found.structured_content["skills"][0]["name"] == "internal-audit"
