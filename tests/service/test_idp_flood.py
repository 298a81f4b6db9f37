"""A served replica whose identity provider hangs, with no signing keys cached: a flood of
junk JWTs naming random key ids for 15 s does not hold a static-token caller (each call answers
within 1 s, health checks too), and the server exits within 20 s of SIGTERM."""

from __future__ import annotations

import base64
import json
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.v1 import router_pb2 as pb
from tests.support.principals import entry, principals_yaml
from tests.support.processes import cli_process, run_cli
from tests.support.servers import make_stub
from tests.support.skills import add_skill
from tests.support.slow_idp import SlowProvider, slow_provider

FLOOD_SECONDS = 15.0
ANSWER_WITHIN = 1.0
EXIT_WITHIN = 20.0
FLOODERS = 24  # more than the server's 8 call threads


def _part(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def junk_jwt() -> str:
    """A well-formed RS256 JWT naming a random key id, signed by nobody."""
    header = {"alg": "RS256", "typ": "JWT", "kid": secrets.token_hex(8)}
    return f"{_part(header)}.{_part({'sub': 'intruder'})}.{_part('sig')}"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("flood")
    add_skill(base / "skills", "pdf-tools", "Extracts text and tables from PDF files.")
    add_skill(base / "skills", "git-helper", "Writes git commit messages.")
    (base / "empty").mkdir()
    run_cli("index", "--bundled", str(base / "skills"), "--project", str(base / "empty"),
            "--home", str(base / "empty"), "--out", str(base / "index"), "--model", "hash")
    return base / "index"


@pytest.fixture
def hanging() -> Iterator[SlowProvider]:
    with slow_provider("hang") as provider:
        yield provider


def _flood(address: str, until: float, refused: list[grpc.StatusCode]) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = make_stub(channel)
        while time.monotonic() < until:
            try:
                stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                                metadata=[("authorization", f"Bearer {junk_jwt()}")])
            except grpc.RpcError as exc:
                refused.append(exc.code())  # type: ignore[attr-defined]


def test_a_junk_jwt_flood_against_a_hanging_provider_holds_no_one(
        index_dir: Path, hanging: SlowProvider, tmp_path: Path) -> None:
    principals = tmp_path / "principals.yaml"
    principals.write_text(principals_yaml(
        entry("legacy", "tok-static", ["route"]),
        oidc={"issuer": "http://127.0.0.1/realm", "audience": "skill-router",
              "jwks_url": hanging.url}))
    with cli_process("serve", "--index", str(index_dir), "--host", "127.0.0.1", "--port", "0",
                     "--principals", str(principals),
                     stderr=(tmp_path / "stderr.log").open("w")) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line
        address = line.split("listening on ", 1)[1].split()[0]
        until = time.monotonic() + FLOOD_SECONDS
        refused: list[grpc.StatusCode] = []
        flooders = [threading.Thread(target=_flood, args=(address, until, refused),
                                     daemon=True) for _ in range(FLOODERS)]
        for thread in flooders:
            thread.start()
        slowest, calls = 0.0, 0
        with grpc.insecure_channel(address) as channel:
            stub, health = make_stub(channel), health_pb2_grpc.HealthStub(channel)
            grpc.channel_ready_future(channel).result(timeout=10)
            while time.monotonic() < until:
                started = time.monotonic()
                reply = stub.ListSkills(pb.ListSkillsRequest(), timeout=10,
                                        metadata=[("authorization", "Bearer tok-static")])
                assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == \
                    health_pb2.HealthCheckResponse.SERVING
                slowest, calls = max(slowest, time.monotonic() - started), calls + 1
                assert {s.name for s in reply.skills} == {"pdf-tools", "git-helper"}
        for thread in flooders:
            thread.join(40)
        print(f"static caller: {calls} calls, slowest {slowest:.3f} s")
        assert slowest < ANSWER_WITHIN, f"a static caller waited {slowest:.1f} s"
        assert calls > 10 and refused
        assert set(refused) == {grpc.StatusCode.UNAUTHENTICATED}
        assert hanging.connections <= FLOOD_SECONDS / 5 + 2  # a fetch per deadline + back-off
        proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        proc.wait(EXIT_WITHIN + 5)
        assert time.monotonic() - stopped < EXIT_WITHIN
