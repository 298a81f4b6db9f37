"""The door as a proxy: the ListResources RPC it relies on, state carried on every call so
replicas need no affinity, an unreachable service, and a host that leaves mid-call."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import grpc
import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import TextContent

from router.activation.activator import Activation, Resource, ResourceList
from router.client import SkillRouterClient
from router.door.backend import Search, SkillFile
from router.door.context import CallSession
from router.door.proxy import GrpcBackend
from router.engine import Engine
from router.errors import RouterError
from router.mcp.sessions import DoorSessions
from router.mcp.tools import SkillTools
from router.service.server import RouterServer
from tests.support.indexes import open_engine
from tests.support.mcp_doors import stdio_params
from tests.support.ports import free_port
from tests.support.servers import start_server
from tests.support.skills import Tree

T = TypeVar("T")


@pytest.fixture()
def client(grpc_server: RouterServer) -> Iterator[SkillRouterClient]:
    with SkillRouterClient(f"127.0.0.1:{grpc_server.port}") as made:
        yield made


def test_list_resources_lists_like_activate_without_activating(client: SkillRouterClient,
                                                               tree: Tree) -> None:
    listed = client.list_resources("pdf-tools")
    assert list(listed.resources) == ["assets/logo.png", "references/guide.md",
                                      "scripts/extract.py"]
    assert not listed.resources_truncated
    assert listed.skill_dir == str((tree.root / "pdf-tools").resolve())
    activated = client.activate("pdf-tools", session_id="list-then-activate")
    assert activated.content and not activated.already_active  # listing marked nothing
    assert list(activated.resources) == list(listed.resources)


@pytest.mark.parametrize(("name", "code"), [
    ("no-such-skill", grpc.StatusCode.NOT_FOUND),
    ("switched-off", grpc.StatusCode.PERMISSION_DENIED),
    ("", grpc.StatusCode.INVALID_ARGUMENT),
])
def test_list_resources_refuses_like_read_resource(client: SkillRouterClient, name: str,
                                                   code: grpc.StatusCode) -> None:
    with pytest.raises(RouterError) as caught:
        client.list_resources(name)
    assert caught.value.code is code


class RoundRobin:
    """Two proxies to two replicas, taken in turn: what a balancer without affinity does."""

    def __init__(self, backends: list[GrpcBackend]) -> None:
        self.backends = backends
        self.calls = 0

    def _next(self) -> GrpcBackend:
        self.calls += 1
        return self.backends[self.calls % len(self.backends)]

    def search(self, query: str, top_k: int, session: CallSession) -> Search:
        return self._next().search(query, top_k, session)

    def activate(self, name: str, session: CallSession) -> Activation:
        return self._next().activate(name, session)

    def list_resources(self, name: str) -> ResourceList:
        return self._next().list_resources(name)

    def read_resource(self, name: str, path: str) -> Resource:
        return self._next().read_resource(name, path)

    def skills(self) -> tuple[SkillFile, ...]:
        return self._next().skills()

    def close(self) -> None:
        for backend in self.backends:
            backend.close()


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.anyio
async def test_replicas_need_no_affinity(grpc_server: RouterServer, tree: Tree) -> None:
    other = start_server(open_engine(tree.index))  # its own memory
    backend = RoundRobin([GrpcBackend(SkillRouterClient(f"127.0.0.1:{port}"))
                          for port in (grpc_server.port, other.port)])
    tools = SkillTools(backend, DoorSessions())
    try:
        first = await tools.activate("host-session-1", "git-helper")  # one replica
        second = await tools.activate("host-session-1", "git-helper")  # the other
        found = await tools.search("host-session-1", "write a git commit message", 5)
        fresh = await tools.activate("host-session-2", "git-helper")
    finally:
        backend.close()
        other.stop(0)
    assert backend.calls == 4
    assert text(first).startswith('<skill_content name="git-helper">')
    assert "already active" in text(second)
    assert {"name": "git-helper", "reason": "active"}.items() <= \
        found.structured_content["skills"][0].items()  # type: ignore[index]
    assert text(fresh).startswith('<skill_content name="git-helper">')


@pytest.mark.anyio
async def test_an_unreachable_service_is_a_tool_error_not_a_crash() -> None:
    backend = GrpcBackend(SkillRouterClient(f"127.0.0.1:{free_port()}", timeout=1.0, retries=0))
    tools = SkillTools(backend, DoorSessions())
    try:
        with pytest.raises(ToolError, match="did not answer"):
            await tools.search("s", "extract tables from a PDF", 5)
    finally:
        backend.close()


def gate(engine: Engine, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[threading.Event, threading.Event]:
    """Make the engine's next route wait: (entered, release)."""
    entered, release = threading.Event(), threading.Event()
    original: Callable[..., Any] = engine.route_turn

    def gated(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(60)
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "route_turn", gated)
    return entered, release


@pytest.mark.anyio
async def test_a_host_that_leaves_mid_call_does_not_hurt_the_door(
        proxy_door: str, tree_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = gate(tree_engine, monkeypatch)

    async def leaving_host() -> None:
        async with Client(proxy_door, mode="legacy") as host:
            await host.call_tool("search_skills", {"query": "extract tables from a PDF"})

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(leaving_host)
            assert await anyio.to_thread.run_sync(entered.wait, 60)  # the call is in flight
            group.cancel_scope.cancel()  # the host goes away without waiting for the answer
    finally:
        release.set()
        monkeypatch.undo()
    async with Client(proxy_door, mode="legacy") as host:
        result = await host.call_tool("search_skills", {"query": "extract tables from a PDF"})
    assert not result.is_error
    assert result.structured_content["skills"][0]["name"] == "pdf-tools"  # type: ignore[index]


def test_the_client_balances_across_replicas() -> None:
    import json

    from router.client import service_config

    assert json.loads(service_config(3))["loadBalancingConfig"] == [{"round_robin": {}}]


@pytest.mark.anyio
async def test_the_proxy_sends_the_token_the_service_requires(tree_engine: Engine,
                                                             tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("token-door\n")
    (tmp_path / "door-token").write_text("token-door\n")
    guarded = start_server(tree_engine, auth_token_file=str(tokens))
    target = f"127.0.0.1:{guarded.port}"
    anonymous = SkillTools(GrpcBackend(SkillRouterClient(target, retries=0)), DoorSessions())
    try:
        with pytest.raises(ToolError, match="--token-file"):
            await anonymous.search("s", "extract tables from a PDF", 5)
        params = stdio_params("--target", target, "--token-file", str(tmp_path / "door-token"))
        async with Client(params) as host:
            found = await host.call_tool("search_skills", {"query": "extract tables from a PDF"})
    finally:
        anonymous.backend.close()
        guarded.stop(0)
    assert not found.is_error
    assert found.structured_content["skills"][0]["name"] == "pdf-tools"  # type: ignore[index]
