"""Prometheus metrics for one server, on its own registry (several servers fit in a process).

Call metrics are fed by the interceptor's observer (``ServiceMetrics.observe``); index and
reindex figures are read from the Engine when scraped, so nothing in the Engine knows about
metrics. Exported (all prefixed ``skill_router_``):

- ``calls_total{method,code}``: every finished call by short method name and status code
- ``door_calls_total{door,method,code}``: the same, by the door it came in at: ``grpc``, or
  ``connect`` (the JSON door, ``router.service.connect``)
- ``call_duration_seconds{method}``: latency histogram of SkillRouter calls (Route, Activate, ...)
- ``rate_limited_total{principal}``: calls refused by a principal's ``rate``
  (``router.service.rates``); sent only to a scrape of every catalog, as the per-skill series
- ``routes_total`` and ``routes_empty_total``: successful Routes, and those that retrieved no
  skill (their ratio is the empty-catalog rate)
- ``routed_skills_total{reason}``: skills placed in catalogs, by reason
- ``skill_routed_total{catalog,skill}`` / ``skill_activated_total{catalog,skill}``: per skill
  of the index (always-on skills are not counted as routed: they are in every catalog; the
  skills a gateway sends with a turn have no series)
- ``skill_shown_total{catalog,skill}``: catalogs that showed this skill, for any reason
- ``skill_succeeded_total``, ``skill_failed_total``, ``skill_wrong_total``,
  ``skill_not_used_total`` (each ``{catalog,skill}``): Feedback outcomes (seed 003's execution
  success and task completion; hit rate is activated / routed)

The per-skill series (``PER_SKILL``) go only to a scrape whose principal sees every catalog
(``shared_registry`` is the rest, for the others; ``router.service.metrics_http``).
- ``index_info{version,model}``, ``index_skills``: the snapshot being served;
  ``admission_findings{severity}``, ``admission_quarantined_skills``: what admission found in it
- ``index_build_timestamp_seconds``: when the served index was built (unix seconds; its age is
  ``time() - ...``; 0 when the manifest's ``built_at`` cannot be read)
- ``reindex_runs_total``, ``reindex_failures_total``, ``reindex_last_duration_seconds``,
  ``index_load_failures_total`` (new versions on disk that were refused)
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from router.door.api import SERVICE_NAME
from router.engine import Engine
from router.service.codec.admission import admission_counts
from router.service.interceptors import CallRecord
from router.service.metric_children import Children
from router.skills.model import DEFAULT_CATALOG, PROJECT_CATALOG
from router.v1 import router_pb2 as pb

log = logging.getLogger(__name__)

PREFIX = "skill_router"
SERVICE_PREFIX = f"/{SERVICE_NAME}/"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
_REASON_PREFIX = "ROUTE_REASON_"
_SKILL = ["catalog", "skill"]
_OUTCOME_COUNTERS: dict[int, str] = {pb.FEEDBACK_OUTCOME_SUCCESS: "succeeded",
                     pb.FEEDBACK_OUTCOME_FAILURE: "failed",
                     pb.FEEDBACK_OUTCOME_WRONG_SKILL: "wrong",
                     pb.FEEDBACK_OUTCOME_NOT_USED: "not_used"}
PER_SKILL = frozenset({f"{PREFIX}_skill_routed", f"{PREFIX}_skill_activated",
                       f"{PREFIX}_skill_shown",
                       f"{PREFIX}_rate_limited",  # names every principal: for a whole view
                       *(f"{PREFIX}_skill_{name}" for name in _OUTCOME_COUNTERS.values())})


def build_timestamp(built_at: str) -> float:
    """Unix seconds of an index manifest's ISO ``built_at`` (naive = UTC); 0.0 if unreadable."""
    try:
        stamp = datetime.fromisoformat(built_at)
    except ValueError:
        return 0.0
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def short_method(method: str) -> str:
    """``/router.v1.SkillRouter/Route`` -> ``Route``; ``/grpc.health.v1.Health/Check`` ->
    ``grpc.health.v1.Health/Check``."""
    if method.startswith(SERVICE_PREFIX):
        return method[len(SERVICE_PREFIX):]
    return method.lstrip("/")


class EngineCollector(Collector):
    """Index and reindex figures, read from the Engine at scrape time."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def collect(self) -> Iterator[Any]:
        info = self._engine.info()
        stats = self._engine.reindex_stats()
        index = InfoMetricFamily(f"{PREFIX}_index", "The index version being served")
        index.add_metric([], {"version": info.version, "model": info.model})
        yield index
        yield GaugeMetricFamily(f"{PREFIX}_index_skills", "Skills in the served index",
                                value=info.skill_count)
        by_severity, quarantined = admission_counts(info.path)
        findings = GaugeMetricFamily(f"{PREFIX}_admission_findings", "Admission's findings in "
                                     "the served index, by severity", labels=["severity"])
        for severity, count in by_severity.items():
            findings.add_metric([severity], count)
        yield findings
        yield GaugeMetricFamily(f"{PREFIX}_admission_quarantined_skills", "Skills of the served "
                                "index that admission quarantined", value=quarantined)
        yield GaugeMetricFamily(f"{PREFIX}_index_build_timestamp_seconds", "When the served "
                                "index was built, in unix seconds",
                                value=build_timestamp(info.built_at))
        yield CounterMetricFamily(f"{PREFIX}_reindex_runs", "Reindex requests completed or "
                                  "failed", value=stats.runs)
        yield CounterMetricFamily(f"{PREFIX}_reindex_failures", "Reindex requests that failed",
                                  value=stats.failures)
        yield GaugeMetricFamily(f"{PREFIX}_reindex_last_duration_seconds",
                                "Wall time of the last reindex", value=stats.last_duration_seconds)
        yield CounterMetricFamily(f"{PREFIX}_index_load_failures", "New index versions found "
                                  "on disk and refused", value=stats.load_failures)
        store = self._engine.recorder.store
        if store is not None:
            backlog = store.backlog()
            yield GaugeMetricFamily(f"{PREFIX}_feedback_spooled_rows", "Feedback rows kept in "
                                    "the local spool until the database takes them",
                                    value=backlog.spooled)
            yield CounterMetricFamily(f"{PREFIX}_feedback_dropped_rows", "Feedback rows "
                                      "dropped, the spool being full", value=backlog.dropped)
            yield CounterMetricFamily(f"{PREFIX}_feedback_set_aside_rows", "Feedback rows the "
                                      "database refused for their content, kept in the "
                                      "dead-letter file", value=backlog.set_aside)
            yield GaugeMetricFamily(f"{PREFIX}_feedback_store_unreachable", "1 while the "
                                    "feedback database cannot be reached",
                                    value=float(backlog.unreachable))


class ServiceMetrics:
    """The metrics of one server. ``observe`` is the interceptor's call observer."""

    def __init__(self, engine: Engine, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        reg = self.registry
        self.calls = Counter(f"{PREFIX}_calls", "Finished calls by method and status code",
                             ["method", "code"], registry=reg)
        self.door_calls = Counter(f"{PREFIX}_door_calls", "Finished calls by door (grpc, "
                                  "connect), method and status code",
                                  ["door", "method", "code"], registry=reg)
        self.latency = Histogram(f"{PREFIX}_call_duration_seconds", "SkillRouter call latency",
                                 ["method"], buckets=LATENCY_BUCKETS, registry=reg)
        self.rate_limited = Counter(f"{PREFIX}_rate_limited", "Calls refused by the rate of "
                                    "this principal", ["principal"], registry=reg)
        self.routes = Counter(f"{PREFIX}_routes", "Successful Route calls", registry=reg)
        self.routes_empty = Counter(f"{PREFIX}_routes_empty", "Routes that retrieved no skill",
                                    registry=reg)
        self.by_reason = Counter(f"{PREFIX}_routed_skills", "Skills placed in catalogs, by "
                                 "reason", ["reason"], registry=reg)
        self.skill_routed = Counter(f"{PREFIX}_skill_routed", "Routes that placed this skill "
                                    "in the catalog (always-on excluded)", _SKILL, registry=reg)
        self.skill_activated = Counter(f"{PREFIX}_skill_activated", "Activations of this skill",
                                       _SKILL, registry=reg)
        self.skill_shown = Counter(f"{PREFIX}_skill_shown", "Catalogs that showed this skill, "
                                   "for any reason", _SKILL, registry=reg)
        self.outcomes: dict[int, Counter] = {
            outcome: Counter(f"{PREFIX}_skill_{name}", f"Feedback outcomes {name} for this "
                             "skill", _SKILL, registry=reg)
            for outcome, name in _OUTCOME_COUNTERS.items()}
        reg.register(EngineCollector(engine))
        self._children = Children()  # each labelled series looked up once, not per call
        self.shared_registry = CollectorRegistry()  # what a scrape of some catalogs sees
        self.shared_registry.register(_Without(self.registry, PER_SKILL))

    def observe(self, record: CallRecord) -> None:
        method = short_method(record.method)
        self._children.of(self.calls, method, record.code.name).inc()
        self._children.of(self.door_calls, record.facts.door, method, record.code.name).inc()
        if record.facts.limited:
            self.rate_limited.labels(principal=record.facts.limited).inc()
        if not record.method.startswith(SERVICE_PREFIX):
            return
        self._children.of(self.latency, method).observe(record.seconds)
        if record.code is not grpc.StatusCode.OK or record.response is None:
            return
        if method == "Route":
            self._observe_route(record.response)
        elif method == "Activate":
            self.skill_activated.labels(catalog=_catalog(record.response),
                                        skill=str(getattr(record.request, "name", ""))).inc()
        elif method == "Feedback":  # counted when stored (never for a route- and session-less one)
            counter = self.outcomes.get(int(getattr(record.request, "outcome", 0)))
            if counter is not None and getattr(record.response, "recorded", False):
                counter.labels(catalog=_catalog(record.response),
                               skill=str(getattr(record.request, "skill", ""))).inc()

    def _observe_route(self, response: Any) -> None:
        self.routes.inc()
        retrieved = False
        children = self._children
        for skill in response.skills:
            children.of(self.by_reason, _reason(skill.reason)).inc()
            if skill.reason == pb.ROUTE_REASON_RETRIEVED:
                retrieved = True
            if skill.catalog == PROJECT_CATALOG:
                continue  # a gateway's own skill: its names are the gateway's, unbounded
            catalog = _catalog(skill)
            children.of(self.skill_shown, catalog, skill.name).inc()
            if skill.reason != pb.ROUTE_REASON_ALWAYS_ON:
                children.of(self.skill_routed, catalog, skill.name).inc()
            if skill.reason == pb.ROUTE_REASON_EXPLICIT and response.explicit_content:
                children.of(self.skill_activated, catalog, skill.name).inc()
        if not retrieved:
            self.routes_empty.inc()


@functools.cache
def _reason(number: int) -> str:
    """``ROUTE_REASON_RETRIEVED`` -> ``retrieved`` (the enum's few values, named once)."""
    return str(pb.RouteReason.Name(number)).removeprefix(_REASON_PREFIX).lower()


def _catalog(message: Any) -> str:
    return str(getattr(message, "catalog", "") or DEFAULT_CATALOG)


class _Without(Collector):
    """``registry``'s families but those named in ``names``."""

    def __init__(self, registry: CollectorRegistry, names: frozenset[str]) -> None:
        self._registry, self._names = registry, names

    def collect(self) -> Iterator[Any]:
        return (f for f in self._registry.collect() if f.name not in self._names)


def start_metrics_http(metrics: ServiceMetrics, port: int, host: str = "0.0.0.0",
                       tokens: Sequence[bytes] | Callable[[bytes | None], bool] = (),
                       narrowed: Callable[[bytes | None], bool] | None = None
                       ) -> tuple[Any, int]:
    """Serve ``/metrics`` for ``metrics`` on ``host:port`` (0 = a free port) in a daemon
    thread, asking for one of ``tokens`` (or a token ``tokens`` accepts, when it is a check)
    when there are any, without the per-skill series for a token ``narrowed`` picks
    (``router.service.metrics_http``).
    Returns ``(http_server, bound_port)``; call ``http_server.shutdown()`` to stop."""
    from router.service.metrics_http import serve_metrics

    return serve_metrics(metrics.registry, port, host, tokens, narrowed,
                         metrics.shared_registry)
