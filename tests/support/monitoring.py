"""The monitoring files in deploy/ (Prometheus rules, the Grafana dashboard, the Operator's
objects) read as data, and a real Prometheus process for the tests that have one.

``python -m tests.support.monitoring`` (``make monitoring-sync``) rewrites
deploy/k8s/monitoring/prometheusrule.yaml from deploy/prometheus/*.yaml.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support import REPO
from tests.support.ports import free_port
from tests.support.processes import stop

RULES_DIR = REPO / "deploy" / "prometheus"
RULE_TESTS_DIR = RULES_DIR / "tests"
DASHBOARD = REPO / "deploy" / "grafana" / "skill-router.json"
MONITORING_K8S = REPO / "deploy" / "k8s" / "monitoring"
PROMETHEUS_RULE = MONITORING_K8S / "prometheusrule.yaml"
GRAFANA_VARIABLES = frozenset({"__rate_interval", "__interval", "__range", "job", "instance",
                               "namespace"})
# What each Grafana variable becomes when a panel query is sent to Prometheus by hand.
SUBSTITUTIONS = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h",
                 "$job": ".*", "$instance": ".*", "$namespace": ".*"}
VARIABLE = re.compile(r"\$\{?(\w+)")
METRIC = re.compile(r"\bskill_router_[a-z_]+\b")
RULE_FILE_HEADER = """\
# For the Prometheus Operator: the groups of deploy/prometheus/*.yaml, copied (kustomize cannot
# load files from outside this folder). Edit those files, then run `make monitoring-sync`;
# tests/unit/test_monitoring_files.py fails while the two differ.
# Your Prometheus must select this object (ruleSelector, e.g. kube-prometheus-stack's
# `release: <its release name>` label; add it under metadata.labels).
"""


def rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*.yaml"))


def rule_groups() -> list[dict[str, Any]]:
    """Every group of every rule file, in file order."""
    return [group for path in rule_files()
            for group in yaml.safe_load(path.read_text())["groups"]]


def rules() -> list[dict[str, Any]]:
    return [rule for group in rule_groups() for rule in group["rules"]]


def render_prometheus_rule() -> str:
    """deploy/k8s/monitoring/prometheusrule.yaml as it must read."""
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
           "metadata": {"name": "skill-router",
                        "labels": {"app.kubernetes.io/name": "skill-router"}},
           "spec": {"groups": rule_groups()}}
    return RULE_FILE_HEADER + yaml.safe_dump(doc, sort_keys=False, width=100)


@dataclass(frozen=True)
class PanelQuery:
    panel: str
    expr: str

    def promql(self) -> str:
        """The query with Grafana's variables replaced by plain values."""
        text = self.expr
        for name, value in SUBSTITUTIONS.items():
            text = text.replace(name, value)
        return text


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those inside collapsed rows too (rows themselves left out)."""
    found: list[dict[str, Any]] = []
    for panel in board["panels"]:
        found.extend(panel.get("panels", []) if panel["type"] == "row" else [panel])
    return found


def panel_queries(board: dict[str, Any]) -> list[PanelQuery]:
    return [PanelQuery(panel["title"], target["expr"]) for panel in panels(board)
            for target in panel.get("targets", []) if target.get("expr")]


def metric_names(text: str) -> set[str]:
    """The exported metric names (``skill_router_...``) a query or rule mentions."""
    return set(METRIC.findall(text))


def promtool() -> str | None:
    return shutil.which("promtool")


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = promtool()
    assert tool is not None
    return subprocess.run([tool, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def until(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


@dataclass(frozen=True)
class Prometheus:
    url: str
    log: Path

    def api(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>``; the ``data`` of a success, AssertionError with the error."""
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as exc:
            body = json.load(exc)
        assert body["status"] == "success", f"{path} {params}: {body.get('error')}"
        return body["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        data = self.api("query", query=promql)
        result: list[dict[str, Any]] = data["result"]
        return result if data["resultType"] == "vector" else [{"value": result}]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as reply:
                return int(reply.status) == 200
        except (urllib.error.URLError, ConnectionError):
            return False


def prometheus_config(folder: Path, targets: list[str], rule_paths: list[Path]) -> Path:
    """A config scraping ``targets`` (job ``skill-router``) every second, evaluating
    ``rule_paths`` every second."""
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "rule_files": [str(p) for p in rule_paths],
              "scrape_configs": [{"job_name": "skill-router",
                                  "static_configs": [{"targets": targets}]}]}
    path = folder / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def fast_rule_copies(folder: Path) -> list[Path]:
    """The rule files with every group evaluated each second (a 5-minute group interval would
    make a test wait minutes for its first evaluation); the rules themselves unchanged."""
    copies = []
    for path in rule_files():
        doc = yaml.safe_load(path.read_text())
        for group in doc["groups"]:
            group["interval"] = "1s"
        copy = folder / path.name
        copy.write_text(yaml.safe_dump(doc, sort_keys=False))
        copies.append(copy)
    return copies


@contextmanager
def running_prometheus(folder: Path, targets: list[str]) -> Iterator[Prometheus]:
    """Debian's ``prometheus`` on a free loopback port with its data under ``folder``,
    scraping ``targets``; ready on entry, stopped on exit."""
    binary = shutil.which("prometheus")
    assert binary is not None
    config = prometheus_config(folder, targets, fast_rule_copies(folder))
    port = free_port()
    log = folder / "prometheus.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT)
    server = Prometheus(f"http://127.0.0.1:{port}", log)
    try:
        until(lambda: proc.poll() is not None or server.ready(), "prometheus to be ready")
        assert proc.poll() is None, f"prometheus exited: {log.read_text()[-2000:]}"
        yield server
    finally:
        stop(proc, 20)


if __name__ == "__main__":
    PROMETHEUS_RULE.write_text(render_prometheus_rule())
    print(f"wrote {PROMETHEUS_RULE.relative_to(REPO)}")
