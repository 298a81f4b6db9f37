"""The deployment manifests parse and wire the pieces the way deploy/README.md describes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


def documents() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") != "Kustomization":
                found[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return found


def test_manifests_hold_the_expected_objects() -> None:
    docs = documents()
    assert {"Deployment/skill-router", "Service/skill-router", "CronJob/skill-router-index",
            "HorizontalPodAutoscaler/skill-router"} <= set(docs)
    assert docs["Service/skill-router"]["spec"]["clusterIP"] == "None"
    hpa = docs["HorizontalPodAutoscaler/skill-router"]["spec"]
    assert hpa["metrics"][0]["resource"]["name"] == "cpu"


def test_probes_use_grpc_health_and_pods_read_the_shared_index() -> None:
    docs = documents()
    container = docs["Deployment/skill-router"]["spec"]["template"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == 50051
    assert container["resources"]["requests"] and container["resources"]["limits"]
    job = docs["CronJob/skill-router-index"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    out = job["containers"][0]["args"]
    assert out[0] == "index" and out[out.index("--out") + 1] == "/data/index"
    args = container["args"]
    assert args[args.index("--index") + 1] == "/data/index"
    claims = {v["persistentVolumeClaim"]["claimName"] for v in job["volumes"]}
    pod = docs["Deployment/skill-router"]["spec"]["template"]["spec"]
    assert claims == {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}


def test_the_mcp_door_proxies_to_the_grpc_service() -> None:
    docs = documents()
    pod = docs["Deployment/skill-router-mcp"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container["args"]
    assert args[0] == "mcp" and args[args.index("--transport") + 1] == "http"
    target = args[args.index("--target") + 1]
    grpc_port = docs["Service/skill-router"]["spec"]["ports"][0]["port"]
    assert target == f"dns:///{docs['Service/skill-router']['metadata']['name']}:{grpc_port}"
    port = int(args[args.index("--port") + 1])
    assert container["readinessProbe"]["tcpSocket"]["port"] == port
    assert "volumes" not in pod  # no model, no index: a proxy only
    service = docs["Service/skill-router-mcp"]["spec"]
    assert service["sessionAffinity"] == "ClientIP"  # MCP sessions live in one pod's memory
    assert service["selector"] == docs["Deployment/skill-router-mcp"]["spec"]["selector"][
        "matchLabels"]
