"""``server.tracing: otlp`` through a real server: a Route continuing the caller's
``traceparent`` is a SERVER span of the caller's trace with the five stage spans under it,
carrying the index version, the principal and the counts, and no user text; refused calls are
error spans; health is not traced. Once with the SDK's in-memory exporter, once end to end
through the OTLP/HTTP exporter to a receiver on loopback that decodes the protobuf export."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from router.door.tracing import start_tracing, stop_tracing
from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.connect import call
from tests.support.servers import serving
from tests.support.spans import recorded_spans

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"
MESSAGE = "merge my confidential PDF files about project nightingale"
STAGES = ["skill_router.encode", "skill_router.search", "skill_router.fuse",
          "skill_router.gate", "skill_router.render"]


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as exporter:
        yield exporter


def _route(stub: Any) -> None:
    stub.Route(pb.RouteRequest(message=MESSAGE), metadata=(("traceparent", TRACEPARENT),))


def test_a_route_continues_the_callers_trace_with_its_stages(
        engine: Engine, exported: InMemorySpanExporter, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    with serving(engine, tracing="otlp", audit_log=str(audit)) as served:
        _route(served.stub)
        health_pb2_grpc.HealthStub(served.channel).Check(health_pb2.HealthCheckRequest())
        with pytest.raises(grpc.RpcError):
            served.stub.Route(pb.RouteRequest(message=""))
    spans = exported.get_finished_spans()
    servers = [s for s in spans if s.kind is SpanKind.SERVER]
    assert [s.name for s in servers] == ["/router.v1.SkillRouter/Route"] * 2  # no health span
    route, refused = servers
    assert format(route.context.trace_id, "032x") == TRACE
    assert route.parent is not None and format(route.parent.span_id, "016x") == PARENT
    assert route.attributes["rpc.grpc.status_code"] == 0 and route.status.is_ok
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.attributes["rpc.grpc.status_code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    children = [s for s in spans if s.parent is not None
                and s.parent.span_id == route.context.span_id]
    assert [s.name for s in children] == STAGES
    version = engine.snapshot.info.version
    for child in children:
        assert child.context.trace_id == route.context.trace_id
        assert child.attributes["skill_router.index_version"] == version
        assert child.attributes["skill_router.principal"] == ""  # the open server's caller
    by_name = {s.name: s for s in children}
    assert by_name["skill_router.search"].attributes["skill_router.candidates"] > 0
    assert by_name["skill_router.render"].attributes["skill_router.shown"] >= 1
    everything = json.dumps([s.to_json() for s in spans])
    assert "nightingale" not in everything and "confidential" not in everything
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert lines[0]["trace_id"] == TRACE  # the audit line names the same trace
    assert lines[1]["trace_id"] == format(refused.context.trace_id, "032x")


class Receiver:
    """An OTLP/HTTP trace receiver on loopback: keeps each export request decoded."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.raw: list[bytes] = []
        self.got = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path == "/v1/traces":
                    receiver.raw.append(body)
                    receiver.requests.append(ExportTraceServiceRequest.FromString(body))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()
                receiver.got.set()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[Any]:
        return [span for request in self.requests for resource in request.resource_spans
                for scope in resource.scope_spans for span in scope.spans]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_otlp_http_export_carries_the_trace_and_no_user_text(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver = Receiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "router-under-test")
    provider = start_tracing("otlp")
    try:
        with serving(engine, tracing="otlp") as served:
            _route(served.stub)
        assert provider.force_flush(30_000)
    finally:
        stop_tracing(provider)
        receiver.close()
    spans = receiver.spans()
    route = next(s for s in spans if s.name == "/router.v1.SkillRouter/Route")
    assert route.trace_id.hex() == TRACE and route.parent_span_id.hex() == PARENT
    children = sorted((s for s in spans if s.parent_span_id == route.span_id),
                      key=lambda s: s.start_time_unix_nano)
    assert [s.name for s in children] == STAGES
    attributes = {a.key for s in children for a in s.attributes}
    assert {"skill_router.index_version", "skill_router.principal"} <= attributes
    service = {a.value.string_value for r in receiver.requests for rs in r.resource_spans
               for a in rs.resource.attributes if a.key == "service.name"}
    assert service == {"router-under-test"}
    assert not any(b"nightingale" in body for body in receiver.raw)


def test_a_json_door_call_continues_the_callers_trace_too(
        engine: Engine, exported: InMemorySpanExporter) -> None:
    with serving(engine, tracing="otlp", http_port=0) as served:
        assert served.running.json_door is not None
        reply = call(served.running.json_door.url, "Route", {"message": MESSAGE},
                     {"traceparent": TRACEPARENT})
    assert reply.status == 200
    servers = [s for s in exported.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert [s.name for s in servers] == ["/router.v1.SkillRouter/Route"]
    span = servers[0]
    assert format(span.context.trace_id, "032x") == TRACE
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT
    assert span.attributes["rpc.system"] == "connect_rpc" and span.status.is_ok
