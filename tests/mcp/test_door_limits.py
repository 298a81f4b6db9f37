"""The HTTP door under load it must survive, on real doors on loopback ports: a flood of half
requests (in a door with a file limit of 256) is closed by the door and it answers afterwards;
one caller's sessions are capped (429 for it, not for the others) and freed by DELETE and by
idle expiry."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from router.engine import Engine
from tests.support import REPO
from tests.support.flood import closed_by_server, file_limit, half_requests
from tests.support.mcp_doors import door_command, door_env, wait_until_listening
from tests.support.ports import free_port
from tests.support.processes import stop
from tests.support.skills import Tree

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "limits-test", "version": "0"}}}
TOKENS = ("limits-token-a", "limits-token-b")
PER_CALLER = 3
IDLE = 3.0


@pytest.fixture
def started(tree: Tree, tree_engine: Engine,
            tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A door with tokens, 3 sessions per caller, 3 s idle expiry, a 2 s header deadline and
    a file limit of 256, once it accepts connections; its process and port."""
    (tmp_path / "tokens").write_text("\n".join(TOKENS) + "\n")
    port = free_port()
    env = {**door_env(), "SKILL_ROUTER_MCP_MAX_SESSIONS_PER_CALLER": str(PER_CALLER),
           "SKILL_ROUTER_MCP_SESSION_IDLE_SECONDS": str(IDLE),
           "SKILL_ROUTER_MCP_HEADER_TIMEOUT_SECONDS": "2"}
    argv = door_command("--index", str(tree.index), "--transport", "http", "--port", str(port),
                        "--accept-token-file", str(tmp_path / "tokens"))
    with (tmp_path / "door.log").open("w+b") as log:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=log,
                                preexec_fn=file_limit(256))
        try:
            wait_until_listening(proc, port, log)
            yield proc, port
        finally:
            stop(proc, 10)


def initialize(port: int, token: str) -> httpx2.Response:
    return httpx2.post(f"http://127.0.0.1:{port}/mcp", content=json.dumps(INITIALIZE),
                       headers={"Content-Type": "application/json",
                                "Accept": "application/json, text/event-stream",
                                "Authorization": f"Bearer {token}"}, timeout=30.0)


def session_of(answer: httpx2.Response) -> str:
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


def test_a_flood_of_half_requests_is_closed_and_the_door_answers_after(
        started: tuple[subprocess.Popen[bytes], int]) -> None:
    proc, port = started
    with half_requests(port, 600) as flood:
        closed = closed_by_server(flood, time.monotonic() + 40.0)
    assert closed == 600
    assert proc.poll() is None
    session_of(initialize(port, TOKENS[0]))


def test_sessions_are_capped_per_caller_and_freed(
        started: tuple[subprocess.Popen[bytes], int]) -> None:
    _proc, port = started
    mine = [session_of(initialize(port, TOKENS[0])) for _ in range(PER_CALLER)]
    refused = initialize(port, TOKENS[0])
    assert refused.status_code == 429 and "mcp-session-id" not in refused.headers
    others = session_of(initialize(port, TOKENS[1]))  # another caller is not affected
    ended = httpx2.delete(f"http://127.0.0.1:{port}/mcp", timeout=30.0,
                          headers={"mcp-session-id": mine[0],
                                   "Authorization": f"Bearer {TOKENS[0]}"})
    assert ended.status_code == 200
    session_of(initialize(port, TOKENS[0]))  # room again after a DELETE
    assert initialize(port, TOKENS[0]).status_code == 429
    # idle sessions expire (the door answers 404 for them), and make room
    deadline = time.monotonic() + IDLE + 30.0
    while initialize(port, TOKENS[0]).status_code == 429:
        assert time.monotonic() < deadline, "idle sessions never expired"
        time.sleep(0.2)  # polling for the observed event (a session expired)
    assert others  # the other caller's session was never touched by the cap
