"""The HTTP door's own callers, through a real door on a real port: accepted bearer tokens (file
and environment variable), 401 with a Bearer challenge otherwise, Host/Origin checks, the bind
rule and its opt-out, and a bounded load with the right token. The gated door listens on
0.0.0.0 (as in Kubernetes) and proxies to a gRPC server that wants its own, different token."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from router.engine import Engine
from router.service.server import RouterServer
from tests.support import REPO
from tests.support.mcp_doors import RunningDoor, door_command, door_env, running_door
from tests.support.servers import start_server
from tests.support.skills import Tree

SERVICE_TOKEN = "grpc-secret-for-the-door"  # what the door presents to the gRPC service
FILE_TOKENS = ("door-file-1", "door-file-2")
ENV_TOKENS = ("door-env-1", "door-env-2")
ENV_VAR = "SKILL_ROUTER_TEST_DOOR_TOKENS"
BALANCER_HOST = "router.internal"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "auth-test", "version": "0"}}}


@pytest.fixture(scope="module")
def secured_service(tree_engine: Engine, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[RouterServer]:
    """A gRPC server that accepts only SERVICE_TOKEN."""
    tokens = tmp_path_factory.mktemp("service-tokens") / "tokens"
    tokens.write_text(f"{SERVICE_TOKEN}\n")
    server = start_server(tree_engine, max_workers=16, auth_token_file=str(tokens))
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def gated(secured_service: RouterServer, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[RunningDoor]:
    """The door on 0.0.0.0 with accepted tokens from a file and a variable, presenting
    SERVICE_TOKEN (--token-file) to the service, and one extra allowed host."""
    folder = tmp_path_factory.mktemp("door-tokens")
    (folder / "accepted").write_text("# hosts\n" + "\n".join(FILE_TOKENS) + "\n")
    (folder / "outbound").write_text(f"{SERVICE_TOKEN}\n")
    args = ["--target", f"127.0.0.1:{secured_service.port}",
            "--token-file", str(folder / "outbound"),
            "--accept-token-file", str(folder / "accepted"), "--accept-token-env", ENV_VAR,
            "--allowed-host", BALANCER_HOST]
    with running_door(args, {ENV_VAR: " , ".join(ENV_TOKENS)}, host="0.0.0.0") as door:
        yield door


def post(url: str, *, token: str | None = None, scheme: str = "Bearer",
         **headers: str) -> httpx2.Response:
    """One raw initialize request, as any HTTP client would send it."""
    sent = {"Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["Authorization"] = f"{scheme} {token}"
    return httpx2.post(url, content=json.dumps(INITIALIZE), headers=sent, timeout=30.0)


def authed(url: str, token: str, http: httpx2.AsyncClient) -> Client:
    """An MCP session whose every HTTP request carries the token (what a host's ``headers``
    setting does)."""
    http.headers["Authorization"] = f"Bearer {token}"
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


def http_client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0))


# --- refused -------------------------------------------------------------------------------

def test_no_token_is_refused_with_a_bearer_challenge(gated: RunningDoor) -> None:
    reply = post(gated.url)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer ")
    assert "error=" not in reply.headers["www-authenticate"]  # RFC 6750: no credentials sent
    assert reply.headers["content-type"] == "application/json"
    assert "Authorization: Bearer <token>" in reply.json()["error_description"]
    get = httpx2.get(gated.url, headers={"Accept": "text/event-stream"}, timeout=30.0)
    assert get.status_code == 401  # every method, not only POST


@pytest.mark.parametrize(("token", "scheme"), [
    ("door-file", "Bearer"),  # a prefix of an accepted token
    ("door-file-1x", "Bearer"),  # longer
    (SERVICE_TOKEN, "Bearer"),  # the token the door presents to the service is not accepted
    (FILE_TOKENS[0], "Basic"),  # the right token under another scheme
    (f"{FILE_TOKENS[0]},{ENV_TOKENS[0]}", "Bearer"),  # the variable's list, not one token
])
def test_a_wrong_token_is_refused(gated: RunningDoor, token: str, scheme: str) -> None:
    reply = post(gated.url, token=token, scheme=scheme)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer ")


def test_the_right_token_passes_the_gate(gated: RunningDoor) -> None:
    reply = post(gated.url, token=ENV_TOKENS[1], scheme="bearer")  # scheme case-insensitive
    assert reply.status_code == 200, reply.text


# --- accepted: tokens from the file and from the variable ----------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("token", [FILE_TOKENS[1], ENV_TOKENS[0]])
async def test_a_host_with_an_accepted_token_lists_and_searches(gated: RunningDoor,
                                                                token: str) -> None:
    async with http_client() as http, authed(gated.url, token, http) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_skills",
                                       {"query": "extract the tables from this PDF file"})
    assert tools == {"search_skills", "activate_skill", "read_skill_resource"}
    assert not found.is_error  # the door reached the service with its own (outbound) token
    assert found.structured_content["skills"][0]["name"] == "pdf-tools"  # type: ignore[index]


@pytest.mark.anyio
async def test_a_bounded_load_with_the_right_token_has_no_error(gated: RunningDoor) -> None:
    sessions, calls_each = 10, 20  # 200 calls, 10 at a time
    errors: list[str] = []
    done = [0]

    async def host(number: int) -> None:
        async with http_client() as http, authed(gated.url, FILE_TOKENS[0], http) as client:
            for call in range(calls_each):
                try:
                    result = await client.call_tool(
                        "search_skills", {"query": f"merge PDF documents {number}-{call}"})
                except Exception as exc:  # counted, not raised: the test reports them all
                    errors.append(repr(exc))
                    continue
                done[0] += 1
                if result.is_error:
                    errors.append(str(result.content))

    async with anyio.create_task_group() as group:
        for number in range(sessions):
            group.start_soon(host, number)
    assert errors == []
    assert done[0] == sessions * calls_each


# --- Host and Origin -----------------------------------------------------------------------

@pytest.mark.parametrize(("headers", "status"), [
    ({"Host": "attacker.example"}, 421),
    ({"Host": "attacker.example:8765"}, 421),
    ({"Host": f"{BALANCER_HOST}"}, 200),  # behind a load balancer on its default port
    ({"Host": f"{BALANCER_HOST}:8443"}, 200),
    ({"Origin": "http://attacker.example"}, 403),
    ({"Origin": f"https://{BALANCER_HOST}"}, 200),
])
def test_only_allowed_hosts_and_origins_are_served(gated: RunningDoor, headers: dict[str, str],
                                                   status: int) -> None:
    assert post(gated.url, token=FILE_TOKENS[0], **headers).status_code == status


def test_an_unauthenticated_caller_learns_nothing_about_hosts(gated: RunningDoor) -> None:
    assert post(gated.url, Host="attacker.example").status_code == 401


# --- the bind rule ---------------------------------------------------------------------------

def door_exit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(door_command(*args), cwd=REPO, env={**door_env(), **(env or {})},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "router.internal"])
def test_a_door_beyond_loopback_without_tokens_refuses_to_start(host: str) -> None:
    done = door_exit("--target", "127.0.0.1:1", "--transport", "http", "--host", host,
                     "--port", "0")
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.startswith("error: refusing to listen on") and "\n" not in message
    for flag in ("--accept-token-file", "--accept-token-env", "--allow-unauthenticated"):
        assert flag in message


@pytest.mark.parametrize(("flags", "env", "says"), [
    (["--accept-token-env", "SKILL_ROUTER_TEST_UNSET"], {}, "not set"),
    (["--accept-token-env", "SKILL_ROUTER_TEST_EMPTY"], {"SKILL_ROUTER_TEST_EMPTY": " , "},
     "hold no token"),
    (["--accept-token-file", "/nonexistent/tokens"], {}, "cannot read the token file"),
    ([], {"SKILL_ROUTER_MCP_ACCEPT_TOKEN_FILE": "/nonexistent/tokens"},
     "cannot read the token file"),  # the config key, through its environment override
])
def test_unusable_token_sources_refuse_to_start(flags: list[str], env: dict[str, str],
                                                says: str) -> None:
    done = door_exit("--target", "127.0.0.1:1", "--transport", "http", "--port", "0", *flags,
                     env=env)
    assert done.returncode == 2 and says in done.stderr


def test_accepted_tokens_are_refused_on_stdio() -> None:
    done = door_exit("--target", "127.0.0.1:1", "--accept-token-file", "/dev/null")
    assert done.returncode == 2 and "--transport http only" in done.stderr


@pytest.mark.anyio
async def test_the_opt_out_starts_open_and_says_so(tree: Tree) -> None:
    with running_door(["--index", str(tree.index), "--allow-unauthenticated"],
                      host="0.0.0.0") as door:
        async with Client(door.url, mode="legacy") as client:
            tools = (await client.list_tools()).tools
        log = door.log()
    assert len(tools) == 3
    assert "authenticates nobody" in log and "mcp.allow_unauthenticated" in log
    assert "no caller authentication" in log  # the listening line


def test_the_gated_door_says_it_checks_tokens(gated: RunningDoor) -> None:
    assert "(bearer tokens)" in gated.log()
    assert "authenticates nobody" not in gated.log()


def test_a_token_file_of_comments_only_refuses_to_start(tmp_path: Path) -> None:
    empty = tmp_path / "tokens"
    empty.write_text("# nobody yet\n")
    done = door_exit("--target", "127.0.0.1:1", "--transport", "http", "--port", "0",
                     "--accept-token-file", str(empty))
    assert done.returncode == 2 and "hold no token" in done.stderr
