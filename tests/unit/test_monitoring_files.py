"""The monitoring files in deploy/: rules well-formed and documented, the Operator's copy of
them identical, the dashboard provisionable and using only the allowed variables; promtool's
own checks and unit tests where promtool is installed. (That the queries name only exported
metrics and evaluate in a real Prometheus: tests/service/test_monitoring.py.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO
from tests.support.monitoring import (
    DASHBOARD,
    GRAFANA_VARIABLES,
    MONITORING_K8S,
    PROMETHEUS_RULE,
    RULE_TESTS_DIR,
    RULES_DIR,
    VARIABLE,
    dashboard,
    panel_queries,
    panels,
    promtool,
    render_prometheus_rule,
    rule_files,
    rule_groups,
    rules,
    run_promtool,
)

ALERTS = {"SkillRouterHighErrorRate", "SkillRouterRouteLatencyHigh", "SkillRouterEmptyRoutesHigh",
          "SkillRouterReindexFailing", "SkillRouterIndexVersionRefused", "SkillRouterIndexBehind",
          "SkillRouterIndexStale", "SkillRouterHitRateDrop", "SkillRouterSkillNeverActivated",
          "SkillRouterFeedbackStoreUnreachable", "SkillRouterFeedbackRowsDropped"}
needs_promtool = pytest.mark.skipif(promtool() is None, reason="promtool is not installed "
                                    "(Debian: apt-get install prometheus)")


def alerts() -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for rule in rules() if "alert" in rule}


def readme_anchors() -> set[str]:
    """GitHub's anchors for deploy/README.md's headings."""
    text = (REPO / "deploy" / "README.md").read_text()
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_the_rules_folder_holds_only_rule_files() -> None:
    assert [p.name for p in rule_files()] == ["skill-router.rules.yaml"]
    others = {p.name for p in RULES_DIR.iterdir()} - {"skill-router.rules.yaml", "tests"}
    assert not others
    assert {g["name"] for g in rule_groups()} == {"skill-router.rules", "skill-router.daily",
                                                  "skill-router.alerts"}
    records = [r["record"] for r in rules() if "record" in r]
    assert records and all(r.startswith("skill_router:") for r in records)


def test_every_alert_waits_has_a_severity_and_a_runbook_that_exists() -> None:
    found = alerts()
    assert set(found) == ALERTS
    anchors = readme_anchors()
    for name, rule in found.items():
        assert rule.get("for"), name
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, name
        notes = rule["annotations"]
        assert notes["summary"] and notes["description"], name
        assert notes["runbook_url"] == f"deploy/README.md#{name.lower()}", name
        assert name.lower() in anchors, f"deploy/README.md has no section {name}"


def test_the_operator_rule_carries_the_same_groups() -> None:
    doc = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert doc["kind"] == "PrometheusRule"
    assert doc["spec"]["groups"] == rule_groups(), "run `make monitoring-sync`"
    assert PROMETHEUS_RULE.read_text() == render_prometheus_rule(), "run `make monitoring-sync`"


def test_the_service_monitor_scrapes_the_services_metrics_port() -> None:
    monitor = yaml.safe_load((MONITORING_K8S / "servicemonitor.yaml").read_text())
    service = yaml.safe_load((REPO / "deploy" / "k8s" / "base" / "service.yaml").read_text())
    deployment = yaml.safe_load((REPO / "deploy" / "k8s" / "base" / "deployment.yaml").read_text())
    assert monitor["kind"] == "ServiceMonitor"
    labels = monitor["spec"]["selector"]["matchLabels"]
    assert labels.items() <= service["metadata"]["labels"].items()
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint["path"] == "/metrics"
    metrics_port = ports[endpoint["port"]]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert metrics_port["port"] == int(args[args.index("--metrics-port") + 1])
    kustomization = yaml.safe_load((MONITORING_K8S / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == ["prometheusrule.yaml", "servicemonitor.yaml"]


def test_the_dashboard_is_provisionable_and_uses_only_allowed_variables() -> None:
    board = dashboard()
    assert board["uid"] == "skill-router" and board["schemaVersion"] >= 36
    queries = panel_queries(board)
    assert len({q.panel for q in queries}) >= 6
    titles = {p["title"] for p in panels(board)}
    assert {"Requests by method", "Errors by method and code", "Latency quantiles",
            "Empty routes", "Top routed skills", "Top activated skills", "Hit rate",
            "Reindexes"} <= titles
    text = DASHBOARD.read_text()
    used = set(VARIABLE.findall(text))
    assert used <= GRAFANA_VARIABLES, used - GRAFANA_VARIABLES
    assert {v["name"] for v in board["templating"]["list"]} <= {"job", "instance", "namespace"}
    assert "DS_" not in text and "__inputs" not in board
    for panel in panels(board):
        assert panel["datasource"] == {"type": "prometheus"}, panel["title"]
    for query in queries:
        assert "$" not in query.promql(), query


@needs_promtool
def test_promtool_accepts_the_rules() -> None:
    result = run_promtool("check", "rules", *map(str, rule_files()))
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_promtool_parses_every_panel_query(tmp_path: Path) -> None:
    """Each panel query, its Grafana variables replaced, as a recording rule: promtool's rule
    check parses it as PromQL (no server needed; evaluation: tests/service)."""
    queries = panel_queries(dashboard())
    group = {"name": "panels", "rules": [{"record": f"panel:query_{i}", "expr": q.promql()}
                                         for i, q in enumerate(queries)]}
    path = tmp_path / "panels.yaml"
    path.write_text(yaml.safe_dump({"groups": [group]}))
    result = run_promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(queries)} rules found" in result.stdout


@needs_promtool
def test_promtool_rule_unit_tests_pass() -> None:
    tests = sorted(RULE_TESTS_DIR.glob("*.yaml"))
    assert tests
    result = run_promtool("test", "rules", *map(str, tests))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_promtool_case_that_fires_and_one_that_does_not() -> None:
    cases: dict[str, list[int]] = {}
    for path in sorted(RULE_TESTS_DIR.glob("*.yaml")):
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                cases.setdefault(case["alertname"], []).append(len(case.get("exp_alerts", [])))
    for name in ALERTS:
        fired = cases.get(name, [])
        assert any(fired), f"no promtool case where {name} fires"
        assert 0 in fired, f"no promtool case where {name} stays quiet"
