"""The monitoring files against a running server: every metric the rules and the dashboard
name is one it exports, the index build time and reindex failures move as they should, and a
real Prometheus (Debian's ``prometheus``, skipped when absent) scraping the server evaluates
every rule and every panel query without error, with data for the traffic-driven ones."""

from __future__ import annotations

import math
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from router.engine import Engine
from router.service.metrics import ServiceMetrics, build_timestamp, start_metrics_http
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.service.test_metrics_logs import scrape, value
from tests.support.indexes import build_hash_index, index_catalog, open_engine
from tests.support.monitoring import (
    Prometheus,
    dashboard,
    metric_names,
    panel_queries,
    rules,
    running_prometheus,
    until,
)
from tests.support.servers import Served, serving
from tests.support.skills import DIAGNOSTICS, SKILLS

# Panels that may rightly be empty after the test's traffic; every other one must have data.
MAY_BE_EMPTY = {"Routed but never activated"}
OUTCOMES = (pb.FEEDBACK_OUTCOME_SUCCESS, pb.FEEDBACK_OUTCOME_FAILURE,
            pb.FEEDBACK_OUTCOME_WRONG_SKILL, pb.FEEDBACK_OUTCOME_NOT_USED)


@dataclass(frozen=True)
class Metered:
    served: Served
    engine: Engine
    url: str  # the /metrics address
    target: str  # host:port, as Prometheus scrapes it


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metered]:
    """A server with its own index (Feedback writes beside it) and its /metrics."""
    _, out = index_catalog(tmp_path_factory.mktemp("monitored"))
    engine = open_engine(out)
    metrics = ServiceMetrics(engine)
    with serving(engine, observer=metrics.observe) as served:
        http, port = start_metrics_http(metrics, 0, "127.0.0.1")
        try:
            yield Metered(served, engine, f"http://127.0.0.1:{port}/metrics", f"127.0.0.1:{port}")
        finally:
            http.shutdown()


def traffic(stub: pb_grpc.SkillRouterStub) -> None:
    """Two Routes (one retrieving nothing), a refused Route, an Activate, every Feedback
    outcome: each metric the dashboard shows gets a sample."""
    reply = stub.Route(pb.RouteRequest(message="extract the tables from this PDF",
                                       session_id="mon"), timeout=10)
    stub.Route(pb.RouteRequest(message="zzzz qqqq"), timeout=10)
    with pytest.raises(grpc.RpcError):
        stub.Route(pb.RouteRequest(message=""), timeout=10)
    shown = reply.skills[0].name
    stub.Activate(pb.ActivateRequest(name=shown, session_id="mon"), timeout=10)
    for outcome in OUTCOMES:
        stub.Feedback(pb.FeedbackRequest(session_id="mon", skill=shown, outcome=outcome,
                                         route_id=reply.route_id), timeout=10)


def exported_names(url: str) -> set[str]:
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return {s.name for family in text_string_to_metric_families(text) for s in family.samples}


def test_rules_and_dashboard_name_only_exported_metrics(metered: Metered) -> None:
    traffic(metered.served.stub)
    exported = exported_names(metered.url)
    for query in panel_queries(dashboard()):
        missing = metric_names(query.expr) - exported
        assert not missing, f"panel {query.panel!r} uses {missing}, not exported"
    for rule in rules():
        missing = metric_names(rule["expr"]) - exported
        assert not missing, f"rule {rule.get('record') or rule.get('alert')} uses {missing}"


def test_the_index_build_time_is_exported_and_follows_a_reindex(tmp_path: Path) -> None:
    _, out = index_catalog(tmp_path)
    engine = open_engine(out)
    metrics = ServiceMetrics(engine)
    with serving(engine, observer=metrics.observe) as served:
        http, port = start_metrics_http(metrics, 0, "127.0.0.1")
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            before = value(scrape(url), "skill_router_index_build_timestamp_seconds")
            assert before == build_timestamp(engine.info().built_at)
            assert 0 < time.time() - before < 3600
            served.stub.Reindex(pb.ReindexRequest(full=True), timeout=60)
            after = value(scrape(url), "skill_router_index_build_timestamp_seconds")
        finally:
            http.shutdown()
    assert after == build_timestamp(engine.info().built_at) > before


def test_a_failed_reindex_is_counted(tmp_path: Path) -> None:
    engine = open_engine(build_hash_index(SKILLS, tmp_path, DIAGNOSTICS))  # no settings recorded
    metrics = ServiceMetrics(engine)
    with serving(engine, observer=metrics.observe) as served:
        http, port = start_metrics_http(metrics, 0, "127.0.0.1")
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            assert value(scrape(url), "skill_router_reindex_failures_total") == 0
            with pytest.raises(grpc.RpcError):
                served.stub.Reindex(pb.ReindexRequest(), timeout=30)
            samples = scrape(url)
        finally:
            http.shutdown()
    assert value(samples, "skill_router_reindex_failures_total") == 1
    assert value(samples, "skill_router_reindex_runs_total") == 1


def test_build_timestamp_reads_manifest_stamps() -> None:
    stamp = "2026-01-02T03:04:05.500000+00:00"
    assert build_timestamp(stamp) == datetime.fromisoformat(stamp).timestamp()
    assert build_timestamp("2026-01-02T03:04:05") == build_timestamp("2026-01-02T03:04:05+00:00")
    assert build_timestamp("") == 0.0 and build_timestamp("yesterday") == 0.0


# --- with a real Prometheus -------------------------------------------------------------------

needs_prometheus = pytest.mark.skipif(
    shutil.which("prometheus") is None,
    reason="Debian's prometheus is not installed (apt-get install prometheus)")


def scraped_routes(prom: Prometheus, count: int) -> bool:
    found = prom.query('sum(skill_router_routes_total{job="skill-router"})')
    return bool(found) and float(found[0]["value"][1]) >= count


def rfc3339(text: str) -> float:
    """Unix seconds of Go's RFC 3339 time (nanoseconds cut to what Python reads)."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def rules_evaluated(prom: Prometheus, since: float) -> list[dict[str, object]]:
    """Every loaded rule, once each has been evaluated after ``since`` (unix seconds)."""
    loaded = [rule for group in prom.api("rules")["groups"] for rule in group["rules"]]
    stamps = [rfc3339(str(r["lastEvaluation"])) for r in loaded]
    return loaded if loaded and min(stamps) > since else []


@needs_prometheus
def test_prometheus_evaluates_every_rule_and_panel_query(metered: Metered,
                                                         tmp_path: Path) -> None:
    with running_prometheus(tmp_path, [metered.target]) as prom:
        until(lambda: prom.query('up{job="skill-router"} == 1'), "the target to be up")
        base = until(lambda: prom.query('skill_router_routes_total{job="skill-router"}'),
                     "a first scrape")
        routes = float(base[0]["value"][1])
        traffic(metered.served.stub)  # two rounds, each scraped: rates get two samples
        until(lambda: scraped_routes(prom, int(routes) + 2), "the first round to be scraped")
        traffic(metered.served.stub)
        until(lambda: scraped_routes(prom, int(routes) + 4), "the second round to be scraped")
        scraped = time.time()

        loaded = until(lambda: rules_evaluated(prom, scraped), "every rule to be evaluated")
        assert len(loaded) == len(rules())
        broken = {r["name"]: r.get("lastError") for r in loaded if r["health"] != "ok"}
        assert not broken
        for rule in rules():
            prom.query(rule["expr"])  # raises with Prometheus' error if it does not evaluate
        for record in ("skill_router:calls:rate5m", "skill_router:call_error_ratio:rate5m",
                       "skill_router:call_duration_seconds:quantile_rate5m",
                       "skill_router:routes:rate5m", "skill_router:routes_empty:ratio_rate5m",
                       "skill_router:skill_routed:rate1h", "skill_router:hit_ratio:rate1h",
                       "skill_router:index_age_seconds", "skill_router:skill_routed:increase1d",
                       "skill_router:skill_activated:increase1d"):
            assert prom.query(record), f"recording rule {record} has no data"

        empty = []
        for query in panel_queries(dashboard()):
            result = prom.query(query.promql())
            if not result and query.panel not in MAY_BE_EMPTY:
                empty.append(query.panel)
        assert not empty, f"panel queries without data: {empty}"
        rate = prom.query(panel_queries(dashboard())[0].promql())
        assert any(float(r["value"][1]) > 0 for r in rate)  # traffic made it to the rate
        age = prom.query("skill_router:index_age_seconds")
        assert all(not math.isnan(float(r["value"][1])) for r in age)
