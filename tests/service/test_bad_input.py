"""Bad input through a real server: every answer is OK or a caller error with a message, never
INTERNAL, and the server stays SERVING."""

from __future__ import annotations

import threading
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from router.engine import Engine
from router.routing.model import RouteQuery, RouteResult
from router.service import interceptors
from router.skills.limits import CATALOG_BUDGET_CHARS, HISTORY_TURNS, MESSAGE_CHARS
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.servers import serving

CALLER_ERRORS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED}


def huge_text() -> st.SearchStrategy[str]:
    # One character repeated to the length cap; UTF-8 encodable (a lone surrogate cannot be put
    # in a protobuf string at all, so the client library refuses it before any call).
    return st.builds(lambda ch, n: ch * n, st.characters(codec="utf-8"),
                     st.integers(MESSAGE_CHARS - 10, MESSAGE_CHARS + 10))


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


class _HeldEngine(Engine):
    """Holds each served Route until ``release`` is set: a deadline then passes inside the
    server."""

    release = threading.Event()

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        self.release.wait(timeout=30)
        return super().route_turn(query, explain=explain)


def test_a_passed_deadline_is_deadline_exceeded_and_the_server_stays_healthy(
        engine: Engine) -> None:
    held = _HeldEngine(engine.snapshot, engine.config, engine.embedder)
    held.release = threading.Event()
    with serving(held) as served:
        for _ in range(3):
            code, _ = call(served.stub, pb.RouteRequest(message="merge PDF documents"),
                           timeout=0.05)
            assert code is grpc.StatusCode.DEADLINE_EXCEEDED
        held.release.set()
        assert call(served.stub, pb.RouteRequest(message="PDF tables"))[0] is grpc.StatusCode.OK
        assert serving_status(served.channel) == health_pb2.HealthCheckResponse.SERVING


class _Context:
    """The part of a ServicerContext the interceptor's deadline check uses."""

    def __init__(self, remaining: float) -> None:
        self.remaining = remaining
        self.aborted: tuple[grpc.StatusCode, str] | None = None
        self.trailing: object = None

    def set_trailing_metadata(self, metadata: object) -> None:
        self.trailing = metadata

    def time_remaining(self) -> float:
        return self.remaining

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.aborted = (code, details)


@pytest.mark.parametrize(("remaining", "refused"), [(0.0, True), (-1.0, True), (5.0, False)])
def test_a_call_that_arrives_past_its_deadline_is_not_run(remaining: float,
                                                          refused: bool) -> None:
    context = _Context(remaining)
    interceptors._begin(context, "req-1")  # type: ignore[arg-type]
    assert (context.aborted is not None) is refused
    if refused:
        assert context.aborted is not None
        assert context.aborted[0] is grpc.StatusCode.DEADLINE_EXCEEDED
