"""The HTTP door as an OAuth resource server, through real doors on real ports and a provider
on loopback: the protected resource metadata (RFC 9728) at the path-suffixed and the root
well-known paths, a 401 naming it in ``WWW-Authenticate``, a JWT of the provider served as its
principal in-process and through ``--target`` (the door delegating with its own token, the
caller's JWT never reaching the service), bad JWTs refused."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from router.engine import Engine
from router.service.server import RouterServer
from tests.mcp.test_door_principals import refusal, search
from tests.mcp.test_http_auth import post
from tests.support.mcp_doors import RunningDoor, running_door
from tests.support.oidc import Provider, identity_provider, oidc_section
from tests.support.principals import entry, principals_yaml, write_principals
from tests.support.servers import start_server
from tests.support.skills import Tree

WELL_KNOWN = "/.well-known/oauth-protected-resource"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with identity_provider() as running:
        yield running


@pytest.fixture(scope="module")
def files(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("door-oidc")
    # the service: no oidc section; it knows the door (a delegate) and the team by name only
    write_principals(folder / "service.yaml", entry("door", "tok-door", ["route", "delegate"]),
                     entry("team", "", ["route"]))
    (folder / "door.yaml").write_text(
        oidc_section(provider)
        + principals_yaml(entry("team", "", ["route"], subject="team-client"),
                          entry("watcher", "", ["ops"], subject="watcher-client")))
    (folder / "outbound").write_text("tok-door\n")
    return folder


@pytest.fixture(scope="module")
def in_process(tree: Tree, tree_engine: Engine, files: Path) -> Iterator[RunningDoor]:
    with running_door(["--index", str(tree.index), "--principals",
                       str(files / "door.yaml")]) as door:
        yield door


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
            "--resource-url", "https://router.example.com/mcp",
            "--allowed-host", "router.example.com"]
    with running_door(args) as door:
        yield door


def base(door: RunningDoor) -> str:
    return door.url.removesuffix("/mcp")


@pytest.mark.parametrize("path", [WELL_KNOWN + "/mcp", WELL_KNOWN])
def test_the_metadata_names_the_door_and_the_issuer(in_process: RunningDoor,
                                                   provider: Provider, path: str) -> None:
    reply = httpx2.get(base(in_process) + path, timeout=30.0)
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    assert found["resource"] == in_process.url
    assert found["authorization_servers"] == [provider.issuer]
    assert found["bearer_methods_supported"] == ["header"]
    assert "RS256" in found["resource_signing_alg_values_supported"]


def test_the_401_points_to_the_metadata(in_process: RunningDoor, provider: Provider) -> None:
    for token in (None, provider.token("team-client", aud="another-service")):
        reply = post(in_process.url, token=token)
        assert reply.status_code == 401
        challenge = reply.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{base(in_process)}{WELL_KNOWN}/mcp"' in challenge
    assert post(in_process.url, token=provider.token("team-client")).status_code == 200


def test_a_configured_resource_url_is_what_the_metadata_and_the_401_name(
        proxy: RunningDoor) -> None:
    headers = {"Host": "router.example.com"}
    found = httpx2.get(base(proxy) + WELL_KNOWN + "/mcp", headers=headers, timeout=30.0)
    assert found.status_code == 200 and found.json()["resource"] == \
        "https://router.example.com/mcp"
    refused = post(proxy.url, **headers)
    assert refused.status_code == 401 and 'resource_metadata="https://router.example.com' \
        '/.well-known/oauth-protected-resource/mcp"' in refused.headers["www-authenticate"]
    wrong_host = httpx2.get(base(proxy) + WELL_KNOWN, headers={"Host": "evil.example"},
                            timeout=30.0)
    assert wrong_host.status_code == 421


@pytest.mark.parametrize("case", ["expired", "audience", "issuer", "subject"])
def test_a_bad_jwt_is_401(in_process: RunningDoor, provider: Provider, case: str) -> None:
    token = {"expired": provider.token("team-client", exp=int(time.time()) - 300),
             "audience": provider.token("team-client", aud="another"),
             "issuer": provider.token("team-client", iss="https://evil.example"),
             "subject": provider.token("stranger")}[case]
    assert post(in_process.url, token=token).status_code == 401
    assert token not in in_process.log()


@pytest.mark.anyio
@pytest.mark.parametrize("which", ["proxy", "in_process"])
async def test_a_jwt_caller_is_served_as_its_principal(
        which: str, provider: Provider, request: pytest.FixtureRequest) -> None:
    door: RunningDoor = request.getfixturevalue(which)
    found = await search(door.url, provider.token("team-client"))
    assert not found.is_error, found  # with --target: delegated, the service knows no JWT
    assert found.structured_content["skills"][0]["name"] == "pdf-tools"
    assert "requires role route" in await refusal(door.url, provider.token("watcher-client"))


def test_a_callers_renewed_jwts_count_as_one_caller_for_sessions(
        tree: Tree, tree_engine: Engine, files: Path, provider: Provider) -> None:
    env = {"SKILL_ROUTER_MCP_MAX_SESSIONS_PER_CALLER": "2"}
    with running_door(["--index", str(tree.index), "--principals", str(files / "door.yaml")],
                      env) as door:
        tokens = [provider.token("team-client", jti=f"renewed-{n}") for n in range(3)]
        assert [post(door.url, token=t).status_code for t in tokens] == [200, 200, 429]
        assert post(door.url, token=provider.token("watcher-client")).status_code == 200


def nested_header_jwt(depth: int = 5000) -> str:
    """A JWT whose header is ``depth`` nested JSON arrays (base64url), unsigned."""
    import base64

    def part(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return f"{part(b'[' * depth + b']' * depth)}.{part(b'{}')}.{part(b'sig')}"


def test_a_jwt_header_of_nested_arrays_is_401(in_process: RunningDoor) -> None:
    reply = post(in_process.url, token=nested_header_jwt())
    assert reply.status_code == 401, reply.text
    assert "Traceback" not in in_process.log()


def test_the_401_never_names_the_request_host(in_process: RunningDoor) -> None:
    listening = base(in_process)  # http://127.0.0.1:PORT: the address the door listens on
    for host in ('a",error="x', "evil.example"):
        refused = post(in_process.url, Host=host)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert "evil" not in challenge and 'error="x' not in challenge, challenge
        assert f'resource_metadata="{listening}{WELL_KNOWN}/mcp"' in challenge
