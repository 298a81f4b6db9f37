"""The JSON door (the Connect protocol) of a real server on port 0: both codecs, the protocol's
headers, its refusals, and what every call gets at the gRPC port too (a request id, a log line,
metrics and an audit line by door, the caller's trace id)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from router.config import ServerConfig
from router.engine import Engine
from router.errors import InvalidRequest
from router.service.metrics import ServiceMetrics
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.connect import call, parsed, post
from tests.support.servers import make_stub, start_server

ROUTE = "/router.v1.SkillRouter/Route"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


@dataclass(frozen=True)
class Door:
    running: RouterServer
    url: str
    metrics: ServiceMetrics
    audit: Path


@pytest.fixture(scope="module")
def door(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    audit = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    metrics = ServiceMetrics(engine)
    running = start_server(engine, http_port=0, observer=metrics.observe,
                           audit_log=str(audit), max_request_bytes=64 * 1024)
    assert running.json_door is not None
    try:
        yield Door(running, running.json_door.url, metrics, audit)
    finally:
        running.stop(0)


def test_route_answers_proto3_json_and_takes_either_field_spelling(door: Door) -> None:
    camel = call(door.url, "Route", {"message": "merge two PDF files", "topK": 2})
    snake = call(door.url, "Route", {"message": "merge two PDF files", "top_k": 2,
                                     "a_field_from_a_newer_proto": 1})
    for reply in (camel, snake):
        assert reply.status == 200 and reply.headers["content-type"] == "application/json"
        assert "catalogText" in reply.json() and "catalog_text" not in reply.json()
        assert len(reply.headers["trailer-x-request-id"]) == 32
        timing = reply.headers["trailer-server-timing"]  # the server's own time, in ms
        assert timing.startswith("handler;dur=") and float(timing.split("=")[1]) > 0
    first, second = (parsed(r, pb.RouteResponse) for r in (camel, snake))
    assert [s.name for s in first.skills] == [s.name for s in second.skills]
    assert any(s.name == "pdf-tools" for s in first.skills)


def test_the_binary_codec_answers_the_same_message(door: Door) -> None:
    request = pb.RouteRequest(message="merge two PDF files")
    binary = post(door.url, ROUTE, request.SerializeToString(), "application/proto")
    assert binary.status == 200 and binary.headers["content-type"] == "application/proto"
    from_proto = pb.RouteResponse.FromString(binary.body)
    from_json = parsed(call(door.url, "Route", request), pb.RouteResponse)
    from_proto.ClearField("route_id")
    from_json.ClearField("route_id")
    assert from_proto == from_json


@pytest.mark.parametrize(("body", "content_type", "headers", "status", "code", "words"), [
    (b'{"message": ', "application/json", {}, 400, "invalid_argument", "JSON object"),
    (b'["a list"]', "application/json", {}, 400, "invalid_argument", "RouteRequest"),
    (b'{"topK": "many"}', "application/json", {}, 400, "invalid_argument", "topK"),
    (b"\xff\xfe", "application/json", {}, 400, "invalid_argument", "UTF-8"),
    (b"\xff\xff\xff", "application/proto", {}, 400, "invalid_argument", "binary protobuf"),
    (b'{"message": "a\\u0000b"}', "application/json", {}, 400, "invalid_argument", "NUL"),
    (b'{"message": ""}', "application/json", {}, 400, "invalid_argument", "message is empty"),
    (b"{}", "text/plain", {}, 415, "invalid_argument", "Content-Type: application/json"),
    (b"{}", "application/json", {"Connect-Protocol-Version": "2"}, 400, "invalid_argument",
     "version 1"),
    (b"{}", "application/json", {"Connect-Timeout-Ms": "soon"}, 400, "invalid_argument",
     "whole milliseconds"),
    (b"{}", "application/json", {"Content-Encoding": "gzip"}, 501, "unimplemented",
     "uncompressed"),
    (b'{"message": "merge PDFs"}', "application/json", {"Connect-Timeout-Ms": "0"}, 504,
     "deadline_exceeded", "deadline"),
    (b"x" * (65 * 1024), "application/json", {}, 429, "resource_exhausted",
     "server.max_request_bytes"),
])
def test_a_bad_request_gets_a_connect_error_a_person_can_act_on(
        door: Door, body: bytes, content_type: str, headers: dict[str, str], status: int,
        code: str, words: str) -> None:
    reply = post(door.url, ROUTE, body, content_type, headers)
    assert (reply.status, reply.headers["content-type"]) == (status, "application/json")
    error = reply.json()
    assert set(error) == {"code", "message"} and error["code"] == code
    assert words in error["message"], error["message"]


def test_paths_and_verbs_outside_the_service_are_refused(door: Door) -> None:
    unknown = post(door.url, "/router.v1.SkillRouter/Nothing", b"{}")
    assert unknown.status == 404 and unknown.json()["code"] == "unimplemented"
    assert "/router.v1.SkillRouter/Route" in unknown.json()["message"]
    got = post(door.url, ROUTE, b"", method="GET")
    assert got.status == 405 and got.headers["allow"] == "POST"
    version = post(door.url, ROUTE, b'{"message": "merge PDFs"}',
                   headers={"Connect-Protocol-Version": "1", "Connect-Timeout-Ms": "60000"})
    assert version.status == 200


def test_health_answers_at_the_door(door: Door) -> None:
    reply = post(door.url, "/grpc.health.v1.Health/Check", b"{}")
    assert reply.status == 200 and reply.json() == {"status": "SERVING"}
    missing = post(door.url, "/grpc.health.v1.Health/Check", b'{"service": "nope"}')
    assert missing.status == 404 and missing.json()["code"] == "not_found"


def test_calls_are_counted_logged_and_audited_by_door(door: Door) -> None:
    before = door.metrics.registry.get_sample_value(
        "skill_router_door_calls_total",
        {"door": "connect", "method": "Activate", "code": "NOT_FOUND"}) or 0.0
    reply = call(door.url, "Activate", {"name": "no-such-skill"},
                 {"x-request-id": "json-door-call", "traceparent": f"00-{TRACE}-"
                  "00f067aa0ba902b7-01"})
    assert reply.status == 404 and reply.json()["code"] == "not_found"
    assert reply.headers["trailer-x-request-id"] == "json-door-call"
    after = door.metrics.registry.get_sample_value(
        "skill_router_door_calls_total",
        {"door": "connect", "method": "Activate", "code": "NOT_FOUND"})
    assert after == before + 1
    lines = [json.loads(line) for line in door.audit.read_text().splitlines()]
    mine = [line for line in lines if line["request_id"] == "json-door-call"]
    assert len(mine) == 1
    assert mine[0]["door"] == "connect" and mine[0]["trace_id"] == TRACE
    assert mine[0]["method"] == "/router.v1.SkillRouter/Activate"
    assert mine[0]["code"] == "NOT_FOUND" and mine[0]["skills"] == []


def test_the_grpc_port_still_says_its_own_door(door: Door) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{door.running.port}") as channel:
        make_stub(channel).GetIndexInfo(pb.GetIndexInfoRequest())
    assert door.metrics.registry.get_sample_value(
        "skill_router_door_calls_total",
        {"door": "grpc", "method": "GetIndexInfo", "code": "OK"}) == 1.0


def test_a_taken_http_port_is_said_naming_its_flag(engine: Engine) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port}: the port is in use.*--http-port"):
            start_server(engine, http_port=port)


def test_the_http_port_must_differ_from_the_grpc_port() -> None:
    with pytest.raises(InvalidRequest, match=r"server\.http_port"):
        ServerConfig(port=50051, http_port=50051)
    with pytest.raises(InvalidRequest, match=r"server\.http_port"):
        ServerConfig(http_port=70000)
