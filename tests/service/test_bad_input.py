"""Bad input through a real server: every answer is OK or a caller error with a message, never
INTERNAL, and the server stays SERVING."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from router.engine import Engine
from router.skills.limits import CATALOG_BUDGET_CHARS, HISTORY_TURNS, MESSAGE_CHARS
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.servers import serving

CALLER_ERRORS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED}


def huge_text() -> st.SearchStrategy[str]:
    return st.builds(lambda ch, n: ch * n, st.characters(), st.integers(MESSAGE_CHARS - 10,
                                                                        MESSAGE_CHARS + 10))


messages = st.one_of(st.text(max_size=300), st.just(""), st.just("   "), huge_text())
requests = st.builds(
    pb.RouteRequest,
    message=messages,
    history=st.lists(st.one_of(st.text(max_size=80), huge_text()), max_size=HISTORY_TURNS + 5),
    session_id=st.text(max_size=300),
    top_k=st.integers(-5, 100),
    format=st.integers(-3, 8),
    active_skills=st.lists(st.text(max_size=40), max_size=5),
    max_catalog_chars=st.one_of(st.integers(-10, 5000), st.integers(-2**31, 2**31 - 1)),
)


def serving_status(channel: grpc.Channel) -> int:
    health = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
    return int(health.Check(health_pb2.HealthCheckRequest(), timeout=5).status)


def call(stub: pb_grpc.SkillRouterStub, request: pb.RouteRequest,
         timeout: float = 10) -> tuple[grpc.StatusCode, str]:
    try:
        stub.Route(request, timeout=timeout)
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(request=requests)
def test_random_route_requests_never_fail_the_server(
        request: pb.RouteRequest, stub: pb_grpc.SkillRouterStub, channel: grpc.Channel) -> None:
    code, details = call(stub, request)
    assert code is grpc.StatusCode.OK or code in CALLER_ERRORS, (code, details)
    if code is not grpc.StatusCode.OK:
        assert details and "internal" not in details.lower()
    assert serving_status(channel) == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize(("request_", "expected"), [
    (pb.RouteRequest(message="x", max_catalog_chars=CATALOG_BUDGET_CHARS + 1), "max_catalog_chars"),
    (pb.RouteRequest(message="x", history=["y" * (MESSAGE_CHARS + 1)]), "history turn"),
    (pb.RouteRequest(message="x", top_k=51), "top_k"),
    (pb.RouteRequest(message="x", top_k=-1), "top_k"),
    (pb.RouteRequest(message="x", history=["h"] * (HISTORY_TURNS + 1)), "history"),
    (pb.RouteRequest(message="x", format=7), "format"),  # type: ignore[arg-type]
])
def test_each_cap_is_an_actionable_invalid_argument(
        request_: pb.RouteRequest, expected: str, stub: pb_grpc.SkillRouterStub) -> None:
    code, details = call(stub, request_)
    assert code is grpc.StatusCode.INVALID_ARGUMENT and expected in details


def test_an_oversized_request_is_resource_exhausted(engine: Engine, tmp_path: Path) -> None:
    with serving(engine, max_request_bytes=64 * 1024) as served:
        code, _ = call(served.stub, pb.RouteRequest(message="x" * 100_000))
        assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert call(served.stub, pb.RouteRequest(message="PDF tables"))[0] is grpc.StatusCode.OK
        assert serving_status(served.channel) == health_pb2.HealthCheckResponse.SERVING


def test_a_tiny_deadline_is_deadline_exceeded_and_the_server_stays_healthy(
        stub: pb_grpc.SkillRouterStub, channel: grpc.Channel) -> None:
    for _ in range(20):
        code, _ = call(stub, pb.RouteRequest(message="merge PDF documents " * 200),
                       timeout=1e-6)
        assert code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert call(stub, pb.RouteRequest(message="PDF tables"))[0] is grpc.StatusCode.OK
    assert serving_status(channel) == health_pb2.HealthCheckResponse.SERVING
