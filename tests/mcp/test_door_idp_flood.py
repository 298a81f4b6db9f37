"""The MCP door whose identity provider hangs, with no signing keys cached: a flood of junk
JWTs naming random key ids (each 401), more at once than the door has worker threads, does not
hold a static-token caller: its every search_skills answers within a few seconds (each JWT check
parked a worker thread on the key fetch, and a call waited 54 s)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from router.engine import Engine
from tests.mcp.test_http_auth import post
from tests.service.test_idp_flood import junk_jwt
from tests.support.mcp_doors import running_door
from tests.support.principals import entry, principals_yaml
from tests.support.skills import Tree
from tests.support.slow_idp import slow_provider

FLOOD_SECONDS = 15.0
# Generous: the door's one event loop also answers the flood's 401s, on a loaded machine
# (calls of 0.3-1.9 s seen at a load of 8 on 2 cores); a parked door made one wait 54 s.
ANSWER_WITHIN = 5.0
FLOODERS = 44  # more than the door's 40 worker threads


def _flood(url: str, until: float, codes: list[int]) -> None:
    while time.monotonic() < until:
        codes.append(post(url, token=junk_jwt()).status_code)


async def _static_searches(url: str, until: float) -> tuple[float, int]:
    slowest, calls = 0.0, 0
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
        http.headers["Authorization"] = "Bearer tok-static"
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            while time.monotonic() < until:
                started = time.monotonic()
                found = await client.call_tool("search_skills", {"query": "merge two pdfs"})
                slowest, calls = max(slowest, time.monotonic() - started), calls + 1
                assert not found.is_error
    return slowest, calls


def test_a_junk_jwt_flood_against_a_hanging_provider_holds_no_one(
        tree: Tree, tree_engine: Engine, tmp_path: Path) -> None:  # the engine: the index built
    with slow_provider("hang") as hanging:
        principals = tmp_path / "door.yaml"
        principals.write_text(principals_yaml(
            entry("legacy", "tok-static", ["route"]),
            oidc={"issuer": "http://127.0.0.1/realm", "audience": "skill-router",
                  "jwks_url": hanging.url}))
        with running_door(["--index", str(tree.index), "--principals", str(principals)]) as door:
            until = time.monotonic() + FLOOD_SECONDS
            codes: list[int] = []
            flooders = [threading.Thread(target=_flood, args=(door.url, until, codes),
                                         daemon=True) for _ in range(FLOODERS)]
            for thread in flooders:
                thread.start()
            slowest, calls = anyio.run(_static_searches, door.url, until)
            for thread in flooders:
                thread.join(60)
            assert slowest < ANSWER_WITHIN, f"a static caller waited {slowest:.1f} s"
            assert calls > 10 and codes and set(codes) == {401}
