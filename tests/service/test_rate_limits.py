"""``rate:`` on a principal through a real server: 20 calls at once from a principal limited to
2 a second with a burst of 3 (the server's clock held still, so no call's timing matters): 3
answered, 17 RESOURCE_EXHAUSTED with ``retry-after-ms``; another principal, health and a
delegate's own calls unaffected; the refusals counted by principal."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import generate_latest

from router.access.rates import RateLimiter
from router.client import SkillRouterClient
from router.engine import Engine
from router.errors import RateLimited
from router.service.metrics import ServiceMetrics
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.principals import entry, principals_yaml
from tests.support.servers import make_stub, start_server

PRINCIPALS = principals_yaml(
    entry("limited", "tok-limited", ["route"], rate={"per_second": 2, "burst": 3}),
    entry("free", "tok-free", ["route"]), entry("door", "tok-door", ["route", "delegate"]))


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def limited(engine: Engine, tmp_path: Path) -> Iterator[tuple[RouterServer, Clock, ServiceMetrics]]:
    (tmp_path / "principals.yaml").write_text(PRINCIPALS)
    metrics = ServiceMetrics(engine)
    running = start_server(engine, principals_file=str(tmp_path / "principals.yaml"),
                           max_workers=24, observer=metrics.observe)
    clock = Clock()
    running.gate.limiter = RateLimiter(clock)
    try:
        yield running, clock, metrics
    finally:
        running.stop(0)


def _route(stub: object, token: str, *extra: tuple[str, str]) -> grpc.StatusCode | str:
    """OK, or the refusal's code; for RESOURCE_EXHAUSTED its retry-after-ms value."""
    try:
        stub.Route(pb.RouteRequest(message="merge two PDF files"),  # type: ignore[attr-defined]
                   metadata=(("authorization", f"Bearer {token}"), *extra))
        return grpc.StatusCode.OK
    except grpc.RpcError as exc:
        if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
            trailing = dict(exc.trailing_metadata() or ())
            assert "retry in" in (exc.details() or "")
            assert trailing.get("x-request-id")  # the request id is still echoed
            return str(trailing.get("retry-after-ms"))
        return exc.code()


def test_twenty_calls_at_once_most_refused_with_retry_after(
        limited: tuple[RouterServer, Clock, ServiceMetrics]) -> None:
    running, clock, metrics = limited
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = make_stub(channel)
        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(lambda _: _route(stub, "tok-limited"), range(20)))
        answered = [r for r in results if r is grpc.StatusCode.OK]
        refused = [r for r in results if isinstance(r, str)]
        assert len(answered) == 3 and len(refused) == 17
        assert set(refused) == {"500"}  # one token back at 2 a second
        assert _route(stub, "tok-free") is grpc.StatusCode.OK  # another principal's bucket
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(5):
            assert health.Check(health_pb2.HealthCheckRequest()).status == \
                health_pb2.HealthCheckResponse.SERVING
        # a delegate serving the limited principal takes from that principal's bucket
        assert _route(stub, "tok-door", ("x-skill-router-principal", "limited")) == "500"
        assert _route(stub, "tok-door") is grpc.StatusCode.OK
        clock.now += 0.5  # one token back
        assert _route(stub, "tok-limited") is grpc.StatusCode.OK
        assert _route(stub, "tok-limited") == "500"
        # the Python client raises RateLimited, holding when to try again
        with SkillRouterClient(f"127.0.0.1:{running.port}", token="tok-limited",
                               retries=0) as client, pytest.raises(RateLimited) as refused:
            client.route("merge two PDF files")
        assert refused.value.retry_after_ms == 500
        assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    text = generate_latest(metrics.registry).decode()
    assert 'skill_router_rate_limited_total{principal="limited"} 20.0' in text
