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


def test_servers_read_their_tokens_from_the_secret() -> None:
    docs = documents()
    assert docs["Secret/skill-router-auth"]["stringData"]["tokens"] == ""  # fail closed
    container = docs["Deployment/skill-router"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    variable = env["SKILL_ROUTER_SERVER_AUTH_TOKEN_ENV"]["value"]
    source = env[variable]["valueFrom"]["secretKeyRef"]
    assert source == {"name": "skill-router-auth", "key": "tokens"}


def test_the_tls_overlay_moves_probes_to_the_plaintext_health_port() -> None:
    overlay = yaml.safe_load((K8S / "tls" / "kustomization.yaml").read_text())
    assert overlay["resources"] == ["../"]
    ops = yaml.safe_load(overlay["patches"][0]["patch"])
    env = {op["value"]["name"]: op["value"]["value"] for op in ops
           if op["path"].endswith("/env/-")}
    probes = {op["path"].split("/")[-3]: op["value"] for op in ops if "Probe" in op["path"]}
    assert probes == dict.fromkeys(("startupProbe", "readinessProbe", "livenessProbe"),
                                   int(env["SKILL_ROUTER_SERVER_HEALTH_PORT"]))
    assert {"SKILL_ROUTER_SERVER_TLS_CERT_FILE", "SKILL_ROUTER_SERVER_TLS_KEY_FILE"} <= set(env)


def test_sharded_build_jobs_split_by_completion_index_and_merge_on_the_same_volume() -> None:
    docs: dict[str, dict[str, Any]] = {}
    for path in sorted((K8S / "sharded").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        docs[doc["metadata"]["name"]] = doc
    shards = docs["skill-router-index-shards"]["spec"]
    assert shards["completionMode"] == "Indexed"
    count = shards["completions"]
    assert 1 <= shards["parallelism"] <= count
    shard_pod = shards["template"]["spec"]
    command = " ".join(shard_pod["containers"][0]["args"])
    assert f'--shard "${{JOB_COMPLETION_INDEX}}/{count}"' in command
    merge_pod = docs["skill-router-index-merge"]["spec"]["template"]["spec"]
    merge_args = merge_pod["containers"][0]["args"]
    assert merge_args[0] == "index" and "--merge" in merge_args
    out = merge_args[merge_args.index("--out") + 1]
    assert f"--out {out}" in command
    claims = [{v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
              for pod in (shard_pod, merge_pod)]
    assert claims[0] == claims[1] == {"skill-router-index", "skill-router-skills"}


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
    env = {e["name"]: e for e in container["env"]}
    source = env["SKILL_ROUTER_TOKEN"]["valueFrom"]["secretKeyRef"]  # what the client reads
    assert source == {"name": docs["Secret/skill-router-auth"]["metadata"]["name"],
                      "key": "mcp-token"}
    assert "--allow-unauthenticated" not in args  # it listens on 0.0.0.0: tokens, not open
    accepted = env[args[args.index("--accept-token-env") + 1]]["valueFrom"]["secretKeyRef"]
    assert accepted == {"name": source["name"], "key": "door-tokens"}  # not mcp-token
    assert docs["Secret/skill-router-auth"]["stringData"]["door-tokens"] == ""  # fail closed
    hosts = [args[i + 1] for i, arg in enumerate(args) if arg == "--allowed-host"]
    name = docs["Service/skill-router-mcp"]["metadata"]["name"]
    assert name in hosts and f"{name}.$(POD_NAMESPACE).svc.cluster.local" in hosts
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    service = docs["Service/skill-router-mcp"]["spec"]
    assert service["sessionAffinity"] == "ClientIP"  # MCP sessions live in one pod's memory
    assert service["selector"] == docs["Deployment/skill-router-mcp"]["spec"]["selector"][
        "matchLabels"]


def _gpu_docs() -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in
            (yaml.safe_load(p.read_text()) for p in sorted((K8S / "gpu").glob("*.yaml")))}


def test_gpu_build_jobs_ask_for_one_gpu_and_cuda_like_their_cpu_twins() -> None:
    docs = _gpu_docs()
    assert set(docs) == {"skill-router-index-gpu", "skill-router-index-shards-gpu"}
    for doc in docs.values():
        pod = doc["spec"]["template"]["spec"]
        container = pod["containers"][0]
        for side in ("requests", "limits"):
            assert container["resources"][side]["nvidia.com/gpu"] == 1
        assert "--device cuda" in " ".join(container["args"])
        assert container["image"].endswith(":cuda")
        claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
        assert claims == {"skill-router-index", "skill-router-skills"}
    whole = docs["skill-router-index-gpu"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert whole[0] == "index" and whole[whole.index("--out") + 1] == "/data/index"
    shards = docs["skill-router-index-shards-gpu"]["spec"]
    assert shards["completionMode"] == "Indexed"
    command = " ".join(shards["template"]["spec"]["containers"][0]["args"])
    assert f'--shard "${{JOB_COMPLETION_INDEX}}/{shards["completions"]}"' in command
    assert "--out /data/index" in command  # where the CPU merge Job reads the partials


def test_the_dockerfile_picks_the_torch_build_by_argument() -> None:
    text = (K8S.parent / "Dockerfile").read_text()
    assert "ARG TORCH_INDEX=cpu" in text
    assert "download.pytorch.org/whl/${TORCH_INDEX}" in text
    assert "--build-arg TORCH_INDEX=cu128" in text  # the documented GPU build command


def test_the_tenancy_overlay_mounts_the_principals_file_from_the_secret() -> None:
    overlay = yaml.safe_load((K8S / "tenancy" / "kustomization.yaml").read_text())
    assert overlay["resources"] == ["../"]
    ops = yaml.safe_load(overlay["patches"][0]["patch"])
    values = {op["path"]: op["value"] for op in ops}
    env = values["/spec/template/spec/containers/0/env/-"]
    mount = values["/spec/template/spec/containers/0/volumeMounts/-"]
    volume = values["/spec/template/spec/volumes/-"]
    assert env["name"] == "SKILL_ROUTER_SERVER_PRINCIPALS_FILE"
    assert env["value"] == f"{mount['mountPath']}/principals.yaml"
    assert volume["name"] == mount["name"]
    assert volume["secret"]["secretName"] == "skill-router-auth"
    assert volume["secret"]["items"] == [{"key": "principals.yaml", "path": "principals.yaml"}]
