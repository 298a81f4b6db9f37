"""What does not change from call to call is done once: each method's handler is built on its
first call and kept (an unknown method is never kept), each labelled series is looked up once,
and a call without a ``traceparent`` gets its trace id only where something writes one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry, Counter

from router.engine import Engine
from router.service import server as server_module
from router.service.interceptors import CALL_FACTS, CallRecord
from router.service.metric_children import Children
from router.v1 import router_pb2 as pb
from tests.support.servers import serving


class CountingInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Counts how often grpc asks for a method's handler through it."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}

    def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        self.asked[details.method] = self.asked.get(details.method, 0) + 1
        return continuation(details)


def test_each_methods_handler_is_built_once(engine: Engine,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    counting = CountingInterceptor()
    real_server = grpc.server

    def with_counter(pool: Any, interceptors: Any = (), **kwargs: Any) -> Any:
        return real_server(pool, interceptors=[*interceptors, counting], **kwargs)

    monkeypatch.setattr(server_module.grpc, "server", with_counter)
    seen: list[CallRecord] = []
    with serving(engine, observer=seen.append) as served:
        for text in ("extract the tables from this PDF", "fill in a PDF form", "zzzz"):
            served.stub.Route(pb.RouteRequest(message=text), timeout=5)
        for _ in range(2):
            served.stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=5)
        missing = served.channel.unary_unary("/router.v1.SkillRouter/NoSuchMethod")
        for _ in range(2):
            with pytest.raises(grpc.RpcError) as refused:
                missing(b"", timeout=5)
            assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
    assert counting.asked["/router.v1.SkillRouter/Route"] == 1
    assert counting.asked["/router.v1.SkillRouter/GetIndexInfo"] == 1
    assert counting.asked["/router.v1.SkillRouter/NoSuchMethod"] == 2  # never kept
    routes = [r for r in seen if r.method.endswith("/Route")]
    assert len(routes) == 3 and all(r.code is grpc.StatusCode.OK for r in routes)
    assert len({r.request_id for r in routes}) == 3  # still a fresh id per call


def test_trace_id_comes_from_the_callers_traceparent_only(engine: Engine) -> None:
    seen: list[str] = []

    def observe(record: CallRecord) -> None:
        seen.append(record.facts.trace_id)

    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    with serving(engine, observer=observe) as served:
        served.stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=5, metadata=(
            ("traceparent", f"00-{trace}-00f067aa0ba902b7-01"),))
        served.stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=5)
    assert seen == [trace, ""]
    assert CALL_FACTS.get() is None


def test_audit_line_has_a_fresh_trace_id_without_a_traceparent(engine: Engine,
                                                               tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    with serving(engine, audit_log=str(audit)) as served:
        for _ in range(2):
            served.stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=5)
    ids = [json.loads(line)["trace_id"] for line in audit.read_text().splitlines()]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_children_are_the_metrics_own_series() -> None:
    counter = Counter("c", "a counter", ["a", "b"], registry=CollectorRegistry())
    children = Children()
    children.of(counter, "x", "y").inc()
    children.of(counter, "x", "y").inc(2)
    children.of(counter, "x", "z").inc()
    assert counter.labels("x", "y")._value.get() == 3
    assert counter.labels(a="x", b="z")._value.get() == 1
    assert len(children) == 2
