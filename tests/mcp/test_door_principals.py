"""The HTTP door authenticating its callers from a principals file, through real doors and a
real gRPC service: 401 for a missing or unknown token, a caller without ``route`` refused,
each caller of the file served as its principal (in-process, and with ``--target`` by
delegation, which the service checks against its own file), a caller of the door's token file
served as the door itself; a SIGHUP that rotates a token."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from router.engine import Engine
from router.service.server import RouterServer
from tests.mcp.test_http_auth import post
from tests.support.mcp_doors import RunningDoor, running_door
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server
from tests.support.skills import Tree

QUERY = {"query": "extract the tables from this PDF file"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("principals")
    # the service knows the door (a delegate) and the team, not the ghost
    write_principals(folder / "service.yaml", entry("door", "tok-door", ["route", "delegate"]),
                     entry("team", "tok-team-service", ["route"]))
    write_principals(folder / "door.yaml", entry("team", "tok-team", ["route"]),
                     entry("ghost", "tok-ghost", ["route"]), entry("watcher", "tok-watch", ["ops"]))
    (folder / "outbound").write_text("tok-door\n")
    (folder / "accepted").write_text("tok-legacy\n")
    return folder


@pytest.fixture(scope="module")
def service(tree_engine: Engine, files: Path) -> Iterator[RouterServer]:
    server = start_server(tree_engine, max_workers=16,
                          principals_file=str(files / "service.yaml"))
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def proxy(service: RouterServer, files: Path) -> Iterator[RunningDoor]:
    args = ["--target", f"127.0.0.1:{service.port}", "--token-file", str(files / "outbound"),
            "--principals", str(files / "door.yaml"),
            "--accept-token-file", str(files / "accepted")]
    with running_door(args, host="0.0.0.0") as door:  # the file authenticates: no opt-out
        yield door


@pytest.fixture(scope="module")
def in_process(tree: Tree, tree_engine: Engine, files: Path) -> Iterator[RunningDoor]:
    with running_door(["--index", str(tree.index), "--principals",
                       str(files / "door.yaml")]) as door:
        yield door


async def search(url: str, token: str) -> Any:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        http.headers["Authorization"] = f"Bearer {token}"
        async with Client(streamable_http_client(url, http_client=http),
                          mode="legacy") as client:
            return await client.call_tool("search_skills", QUERY)


async def refusal(url: str, token: str) -> str:
    """The message of the error a search as ``token`` raised (inside the client's groups)."""
    try:
        await search(url, token)
    except BaseException as exc:
        return " | ".join(_messages(exc))
    raise AssertionError("the search was not refused")


def _messages(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in _messages(inner)]
    return [str(exc)]


@pytest.mark.parametrize("token", [None, "tok-tea", "tok-door", "tok-team-service"])
def test_a_missing_or_unknown_token_is_401(proxy: RunningDoor, token: str | None) -> None:
    reply = post(proxy.url, token=token)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer ")
    assert post(proxy.url, token="tok-team").status_code == 200


@pytest.mark.anyio
@pytest.mark.parametrize("which", ["proxy", "in_process"])
async def test_callers_of_the_file_are_served_as_their_principal(
        which: str, request: pytest.FixtureRequest) -> None:
    door: RunningDoor = request.getfixturevalue(which)
    found = await search(door.url, "tok-team")
    assert not found.is_error, found
    assert found.structured_content["skills"][0]["name"] == "pdf-tools"
    assert "tools/call requires role route" in await refusal(door.url, "tok-watch")


@pytest.mark.anyio
async def test_the_proxy_delegates_each_caller_and_the_service_checks_the_name(
        proxy: RunningDoor) -> None:
    ghost = await search(proxy.url, "tok-ghost")  # known to the door, not to the service
    assert ghost.is_error
    assert "'ghost'" in str(ghost.content)
    legacy = await search(proxy.url, "tok-legacy")  # the door's own token file: as the door
    assert not legacy.is_error, legacy


def test_sighup_rotates_a_callers_token(tree: Tree, tree_engine: Engine,
                                        tmp_path: Path) -> None:
    path = tmp_path / "door.yaml"
    write_principals(path, entry("team", "tok-old", ["route"]))
    with running_door(["--index", str(tree.index), "--principals", str(path)]) as door:
        assert post(door.url, token="tok-old").status_code == 200
        write_principals(path, entry("team", "tok-new", ["route"]))
        os.kill(door.pid, signal.SIGHUP)
        wait_for(lambda: post(door.url, token="tok-old").status_code == 401)
        assert post(door.url, token="tok-new").status_code == 200
        path.write_text("principals:\n  - name: team\n")
        os.kill(door.pid, signal.SIGHUP)
        wait_for(lambda: "kept the door's principals in use" in door.log())
        assert f"{path}:2: " in door.log()
        assert post(door.url, token="tok-new").status_code == 200


def wait_for(seen: Callable[[], bool], seconds: float = 60.0) -> None:
    """Poll for an observed event (an answer, a line in the door's log), bounded in time."""
    deadline = time.monotonic() + seconds
    while not seen():
        assert time.monotonic() < deadline, "the event was not observed"
        time.sleep(0.05)
