"""Prometheus metrics scraped over HTTP move with the calls; call logs are JSON lines carrying
the request id that the server echoes in trailing metadata."""

from __future__ import annotations

import json
import signal
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from router.engine import Engine
from router.service.interceptors import REQUEST_ID_KEY, SERVER_TIMING_KEY
from router.service.metrics import ServiceMetrics, start_metrics_http
from router.v1 import router_pb2 as pb
from tests.support.indexes import index_catalog
from tests.support.logs import call_log_lines
from tests.support.ports import free_port
from tests.support.processes import cli_process
from tests.support.servers import Served, make_stub, serving

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture()
def metered(tree_engine: Engine) -> Iterator[tuple[Served, str]]:
    metrics = ServiceMetrics(tree_engine)
    with serving(tree_engine, observer=metrics.observe) as served:
        http, port = start_metrics_http(metrics, 0, "127.0.0.1")
        try:
            yield served, f"http://127.0.0.1:{port}/metrics"
        finally:
            http.shutdown()


def test_counters_move_when_scraped_over_http(metered: tuple[Served, str],
                                              tree_engine: Engine) -> None:
    served, url = metered
    before = scrape(url)
    served.stub.Route(pb.RouteRequest(message="extract the tables from this PDF"), timeout=5)
    served.stub.Route(pb.RouteRequest(message="zzzz qqqq"), timeout=5)  # retrieves nothing
    with pytest.raises(grpc.RpcError):
        served.stub.Route(pb.RouteRequest(message=""), timeout=5)
    served.stub.Activate(pb.ActivateRequest(name="pdf-tools", session_id="m"), timeout=5)
    after = scrape(url)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("skill_router_calls_total", method="Route", code="OK") == 2
    assert moved("skill_router_calls_total", method="Route", code="INVALID_ARGUMENT") == 1
    assert moved("skill_router_call_duration_seconds_count", method="Route") == 3
    assert moved("skill_router_call_duration_seconds_count", method="Activate") == 1
    assert moved("skill_router_routes_total") == 2
    assert moved("skill_router_routes_empty_total") == 1
    assert moved("skill_router_skill_routed_total", catalog="default", skill="pdf-tools") == 1
    assert moved("skill_router_routed_skills_total", reason="retrieved") >= 1
    assert moved("skill_router_skill_activated_total", catalog="default",
                 skill="pdf-tools") == 1
    info = tree_engine.info()
    assert value(after, "skill_router_index_info", version=info.version, model=info.model) == 1
    assert value(after, "skill_router_index_skills") == info.skill_count


def test_call_log_lines_are_json_with_the_echoed_request_id(metered: tuple[Served, str]) -> None:
    served, _ = metered
    with call_log_lines() as lines:
        _, call = served.stub.Route.with_call(pb.RouteRequest(message="PDF"), timeout=5,
                                              metadata=[(REQUEST_ID_KEY, "req-42")])
        _, other = served.stub.Route.with_call(pb.RouteRequest(message="git"), timeout=5)
    echoed = [dict(c.trailing_metadata())[REQUEST_ID_KEY] for c in (call, other)]
    assert echoed[0] == "req-42" and len(echoed[1]) == 32
    assert [line["request_id"] for line in lines] == echoed
    # The answer also carries the server's own time (W3C Server-Timing), as the log line has it.
    timings = [dict(c.trailing_metadata())[SERVER_TIMING_KEY] for c in (call, other)]
    for timing, line in zip(timings, lines, strict=True):
        name, _, dur = timing.partition(";dur=")
        assert name == "handler" and 0 < float(dur) <= line["ms"]
    for line in lines:
        assert {"ts", "level", "logger", "msg", "request_id", "method", "code", "ms"} <= set(line)
        assert line["method"] == "/router.v1.SkillRouter/Route" and line["code"] == "OK"


def test_serve_prints_endpoints_and_logs_json(tmp_path: Path) -> None:
    _, out = index_catalog(tmp_path)
    with cli_process("serve", "--index", str(out), "--port", "0", "--metrics-port",
                     str(free_port()), "--log-format", "json") as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert "health: grpc.health.v1 on 127.0.0.1:" in line and "metrics: http://" in line
        address = line.split("listening on ", 1)[1].split()[0]
        url = line.split("metrics: ", 1)[1].split(",")[0]
        with grpc.insecure_channel(address) as chan:
            make_stub(chan).Route(pb.RouteRequest(message="PDF tables"), timeout=10)
        assert value(scrape(url), "skill_router_calls_total", method="Route", code="OK") == 1
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        logs = [json.loads(x) for x in proc.stderr.read().splitlines() if x.strip()]
    assert any(entry.get("method") == "/router.v1.SkillRouter/Route" for entry in logs)
