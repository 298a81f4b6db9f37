"""Health, reflection, error mapping, call logging and graceful shutdown of the server."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from router.engine import Engine
from router.errors import (
    IndexCorrupt,
    IndexUnavailable,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RouterError,
    TooLarge,
)
from router.routing.model import RouteQuery, RouteResult
from router.service.server import RouterServer, create_server
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.servers import make_stub, server_config, start_server

SERVICE = "router.v1.SkillRouter"
REQUEST = pb.RouteRequest(message="merge PDF documents")


class FailingEngine(Engine):
    """Raises ``error`` from a served Route; everything else works."""

    error: Exception = RuntimeError("boom")

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        raise self.error


class GatedEngine(Engine):
    """Holds each route until ``release`` is set, to have a call in flight during shutdown;
    ``entered`` is set once a route is inside the engine."""

    entered = threading.Event()
    release = threading.Event()

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        self.entered.set()
        assert self.release.wait(timeout=30), "the test never released the route"
        return super().route_turn(query, explain=explain)


def clone(engine: Engine, cls: type[Engine]) -> Engine:
    return cls(engine.snapshot, engine.config, engine.embedder)


def health_status(channel: grpc.Channel, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    status: int = stub.Check(health_pb2.HealthCheckRequest(service=service)).status
    return status


@pytest.mark.parametrize("service", ["", SERVICE])
def test_health_is_serving(channel: grpc.Channel, service: str) -> None:
    assert health_status(channel, service) == health_pb2.HealthCheckResponse.SERVING


def test_health_watch_streams_status(channel: grpc.Channel) -> None:
    stream = health_pb2_grpc.HealthStub(channel).Watch(
        health_pb2.HealthCheckRequest(service=SERVICE))
    try:
        assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    finally:
        stream.cancel()


def test_reflection_lists_services(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {SERVICE, "grpc.health.v1.Health"} <= services
    proto = database.FindFileContainingSymbol(SERVICE)
    assert proto.name == "router/v1/router.proto"
    methods = {m.name for m in proto.service[0].method}
    assert methods == {"Route", "ListSkills", "GetIndexInfo", "Explain", "Activate",
                       "ReadResource", "ValidateArguments", "Reindex", "Feedback",
                       "ListResources", "SkillStats", "ListExamples", "PurgeExamples",
                       "ApproveSkill", "RevokeApproval"}


def test_create_server_binds_a_free_port(engine: Engine) -> None:
    server, port = create_server(engine, server_config(), "127.0.0.1:0")
    assert port > 0
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as chan:
            info = make_stub(chan).GetIndexInfo(pb.GetIndexInfoRequest())
            assert info.version == engine.info().version
    finally:
        server.stop(0)


ERROR_CASES = [
    (InvalidRequest("bad"), grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound("missing"), grpc.StatusCode.NOT_FOUND),
    (TooLarge("big"), grpc.StatusCode.RESOURCE_EXHAUSTED),
    (PermissionDenied("no"), grpc.StatusCode.PERMISSION_DENIED),
    (IndexUnavailable("no index"), grpc.StatusCode.UNAVAILABLE),
    (IndexCorrupt("bad checksum"), grpc.StatusCode.UNAVAILABLE),
    (RouterError("unclassified"), grpc.StatusCode.INTERNAL),
    (RuntimeError("boom"), grpc.StatusCode.INTERNAL),
]


@pytest.fixture(scope="module")
def failing(engine: Engine) -> Iterator[tuple[FailingEngine, RouterServer]]:
    failing_engine = clone(engine, FailingEngine)
    assert isinstance(failing_engine, FailingEngine)
    server = start_server(failing_engine)
    yield failing_engine, server
    server.stop(0)


@pytest.mark.parametrize(("error", "code"), ERROR_CASES, ids=lambda v: type(v).__name__)
def test_errors_map_to_status_codes(failing: tuple[FailingEngine, RouterServer],
                                    error: Exception, code: grpc.StatusCode,
                                    caplog: pytest.LogCaptureFixture) -> None:
    failing_engine, server = failing
    failing_engine.error = error
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as chan:
        stub = make_stub(chan)
        with caplog.at_level(logging.INFO), pytest.raises(grpc.RpcError) as info:
            stub.Route(REQUEST)
        assert info.value.code() == code
        if code is grpc.StatusCode.INTERNAL:
            assert "see the server log" in (info.value.details() or "")
            assert any(r.exc_info for r in caplog.records)  # traceback logged
        else:
            assert info.value.details() == str(error)
        # The server survives and keeps answering.
        assert stub.GetIndexInfo(pb.GetIndexInfoRequest()).skill_count > 0
    assert f"/{SERVICE}/Route {code.name}" in caplog.text


def test_one_log_line_per_call(stub: pb_grpc.SkillRouterStub,
                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="router.service.interceptors"):
        stub.Route(REQUEST)
    lines = [r.getMessage() for r in caplog.records
             if r.name == "router.service.interceptors"]
    assert len(lines) == 1
    assert lines[0].startswith(f"/{SERVICE}/Route OK ") and lines[0].endswith("ms")


def test_shutdown_reports_not_serving_and_finishes_in_flight_calls(engine: Engine) -> None:
    gated = clone(engine, GatedEngine)
    assert isinstance(gated, GatedEngine)
    gated.entered, gated.release = threading.Event(), threading.Event()
    running = start_server(gated)
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as chan:
        stub = make_stub(chan)
        assert health_status(chan, SERVICE) == health_pb2.HealthCheckResponse.SERVING
        running.begin_shutdown()
        for service in ("", SERVICE):
            assert health_status(chan, service) == health_pb2.HealthCheckResponse.NOT_SERVING
        with futures.ThreadPoolExecutor(max_workers=1) as pool:
            in_flight = pool.submit(stub.Route, REQUEST)
            assert gated.entered.wait(timeout=30)  # the call is now inside the route
            stopper = threading.Thread(target=running.stop, args=(30.0,))
            stopper.start()
            gated.release.set()  # the in-flight call finishes during the grace period
            response = in_flight.result(timeout=30)
            stopper.join(timeout=30)
    assert any(s.name == "pdf-tools" for s in response.skills)
    assert not stopper.is_alive()
