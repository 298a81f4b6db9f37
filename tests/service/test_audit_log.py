"""``server.audit_log`` through a real server: one JSON line per call (refused calls too) with
its caller, delegation, status, index version and the skills handed out at the digest the
index recorded; the caller's ``traceparent`` as its trace id; no user text; mode 0600."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.engine import Engine
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.principals import entry, principals_yaml
from tests.support.servers import make_stub, start_server
from tests.support.skills import Tree

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"
MESSAGE = "please extract the tables from my secret quarterly PDF files"


PRINCIPALS = principals_yaml(
    entry("router", "tok-route", ["route"]), entry("watcher", "tok-ops", ["ops"]),
    entry("door", "tok-door", ["route", "delegate"]))


@pytest.fixture(scope="module")
def audited(tree_engine: Engine, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[RouterServer, Path]]:
    folder = tmp_path_factory.mktemp("audit")
    (folder / "principals.yaml").write_text(PRINCIPALS)
    log = folder / "audit.jsonl"
    running = start_server(tree_engine, principals_file=str(folder / "principals.yaml"),
                           audit_log=str(log))
    try:
        yield running, log
    finally:
        running.stop(0)


def _calls(port: int) -> list[grpc.StatusCode]:
    """The calls of the test, in order; their status codes."""
    codes = []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = make_stub(channel)
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())

        def call(method: Any, request: Any, token: str, *extra: tuple[str, str]) -> None:
            try:
                method(request, metadata=(("authorization", f"Bearer {token}"), *extra))
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as exc:
                codes.append(exc.code())

        call(stub.Route, pb.RouteRequest(message=MESSAGE), "tok-route",
             ("traceparent", TRACEPARENT))
        call(stub.Activate, pb.ActivateRequest(name="pdf-tools"), "tok-route")
        call(stub.ReadResource, pb.ReadResourceRequest(name="pdf-tools",
                                                       path="scripts/extract.py"), "tok-route")
        call(stub.Route, pb.RouteRequest(message=MESSAGE), "tok-wrong")
        call(stub.Route, pb.RouteRequest(message=MESSAGE), "tok-ops")
        call(stub.Route, pb.RouteRequest(message=MESSAGE), "tok-door",
             ("x-skill-router-principal", "router"))
    return codes


def test_one_line_per_call_with_who_what_and_which_skills(
        audited: tuple[RouterServer, Path], tree: Tree, tree_engine: Engine) -> None:
    running, log = audited
    codes = _calls(running.port)
    assert codes == [grpc.StatusCode.OK] * 3 + [grpc.StatusCode.UNAUTHENTICATED,
                                                 grpc.StatusCode.PERMISSION_DENIED,
                                                 grpc.StatusCode.OK]
    text = log.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == 6  # the health check is not written
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "secret" not in text and "quarterly" not in text  # no user text
    route, activate, read, unknown, denied, delegated = lines
    version = tree_engine.snapshot.info.version
    for line in lines:
        assert set(line) >= {"ts", "request_id", "trace_id", "principal", "acting_for",
                             "method", "code", "index_version"}
        assert len(line["trace_id"]) == 32 and line["index_version"] == version
    assert route["trace_id"] == TRACE and route["principal"] == "router"
    assert route["acting_for"] is None and route["method"] == "/router.v1.SkillRouter/Route"
    digest = "sha256:" + hashlib.sha256(
        (tree.root / "pdf-tools" / "SKILL.md").read_bytes()).hexdigest()
    pdf = {"name": "pdf-tools", "catalog": "default", "digest": digest}
    assert pdf in route["skills"]
    assert activate["skills"] == [pdf] and activate["code"] == "OK"
    assert read["skills"] == [pdf] and read["method"].endswith("/ReadResource")
    assert unknown["code"] == "UNAUTHENTICATED" and unknown["principal"] is None
    assert unknown["skills"] == [] and unknown["trace_id"] != TRACE
    assert denied["code"] == "PERMISSION_DENIED" and denied["principal"] == "watcher"
    assert delegated["principal"] == "door" and delegated["acting_for"] == "router"
    assert len({line["request_id"] for line in lines}) == 6
