"""The deployment manifests parse and wire the pieces the way deploy/README.md describes."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest
import yaml

from tests.support.deploy import (
    DEPLOY,
    K8S,
    STORE_SECRET,
    assert_clones_the_catalog,
    env_of,
    manifests,
    pods,
    served_index,
    store_url_source,
)


def documents() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted([*K8S.glob("*.yaml"), *(K8S / "base").glob("*.yaml")]):
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


def test_probes_use_grpc_health_and_pods_read_the_same_bucket() -> None:
    docs = documents()
    container = docs["Deployment/skill-router"]["spec"]["template"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == 50051
    assert container["resources"]["requests"] and container["resources"]["limits"]
    job = docs["CronJob/skill-router-index"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    out = job["containers"][0]["args"]
    assert out[0] == "index" and out[out.index("--out") + 1] == served_index()
    assert served_index().startswith("s3://")


def test_servers_read_their_tokens_from_the_secret() -> None:
    docs = documents()
    assert docs["Secret/skill-router-auth"]["stringData"]["tokens"] == ""  # fail closed
    container = docs["Deployment/skill-router"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    variable = env["SKILL_ROUTER_SERVER_AUTH_TOKEN_ENV"]["value"]
    source = env[variable]["valueFrom"]["secretKeyRef"]
    assert source == {"name": "skill-router-auth", "key": "tokens"}


def test_no_volume_is_read_write_many_and_no_pod_mounts_a_claim() -> None:
    for path in sorted(DEPLOY.rglob("*.yaml")):
        assert "ReadWriteMany" not in path.read_text(), path
    assert not [path for path, doc in manifests() if doc.get("kind") == "PersistentVolumeClaim"]
    found = pods()
    assert {"Deployment/skill-router", "CronJob/skill-router-index",
            "Job/skill-router-index-merge", "Job/skill-router-index-gpu"} <= set(found)
    for name, pod in found.items():
        claims = [v for v in pod.get("volumes", []) if "persistentVolumeClaim" in v]
        assert claims == [], name


def test_servers_share_only_the_bucket_and_the_database() -> None:
    pod = pods()["Deployment/skill-router"]
    container = pod["containers"][0]
    assert "--root" not in container["args"]  # the skills' files come inside the version
    assert store_url_source(pod) == STORE_SECRET
    env = env_of(container)
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    for variable in ("SKILL_ROUTER_INDEX_CACHE_DIR", "SKILL_ROUTER_FEEDBACK_SPOOL_DIR"):
        assert "emptyDir" in volumes[mounts[env[variable]["value"]]], variable
    assert set(volumes) == set(mounts.values())  # nothing else: no skills volume
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # else the role's credentials
        ref = env[key]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == STORE_SECRET["name"] and ref["optional"] is True
    assert env["AWS_REGION"]["value"]
    assert pod["serviceAccountName"] == "skill-router"


def test_builds_clone_the_catalog_publish_to_the_bucket_and_learn_from_the_database() -> None:
    found = pods()
    cron = found["CronJob/skill-router-index"]
    assert_clones_the_catalog(cron)
    assert store_url_source(cron) == STORE_SECRET
    assert served_index() in cron["containers"][0]["args"]
    skills = yaml.safe_load((K8S / "base" / "skills-source.yaml").read_text())
    assert skills["kind"] == "ConfigMap" and {"repo", "ref"} <= set(skills["data"])
    base = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())["resources"]
    assert {"skills-source.yaml", "serviceaccount.yaml", "cronjob.yaml"} <= set(base)


def test_the_secret_holds_a_postgresql_dsn_and_a_job_migrates_it_ahead_of_a_rollout() -> None:
    docs = documents()
    dsn = docs["Secret/skill-router-auth"]["stringData"]["feedback-store-url"]
    assert dsn.startswith("postgresql://")
    migrate = pods()["Job/skill-router-feedback-migrate"]
    assert migrate["containers"][0]["args"][:2] == ["feedback", "migrate"]
    assert "--to" not in migrate["containers"][0]["args"]  # no password in a command line
    assert store_url_source(migrate) == STORE_SECRET
    for folder in (K8S, K8S / "base"):
        base = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
        assert "feedback-migrate-job.yaml" not in base and "secret.yaml" not in base


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_renders_the_base_with_no_claim() -> None:
    result = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    kinds = {f"{d['kind']}/{d['metadata']['name']}" for d in yaml.safe_load_all(result.stdout)}
    assert {"ServiceAccount/skill-router", "ConfigMap/skill-router-skills",
            "Deployment/skill-router", "CronJob/skill-router-index"} <= kinds
    assert not {k for k in kinds if k.startswith(("PersistentVolumeClaim/", "Secret/", "Job/"))}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize(("overlay", "variable"), [
    ("tls", "SKILL_ROUTER_SERVER_TLS_CERT_FILE"),
    ("tenancy", "SKILL_ROUTER_SERVER_PRINCIPALS_FILE")])
def test_kustomize_renders_each_overlay_on_the_base(overlay: str, variable: str) -> None:
    result = subprocess.run(["kubectl", "kustomize", str(K8S / overlay)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr  # an overlay inside its base is a cycle
    docs = {f"{d['kind']}/{d['metadata']['name']}": d for d in yaml.safe_load_all(result.stdout)}
    assert "CronJob/skill-router-index" in docs
    server = docs["Deployment/skill-router"]["spec"]["template"]["spec"]["containers"][0]
    assert variable in {e["name"] for e in server["env"]}


def test_the_tls_overlay_moves_probes_to_the_plaintext_health_port() -> None:
    overlay = yaml.safe_load((K8S / "tls" / "kustomization.yaml").read_text())
    assert overlay["resources"] == ["../base"]
    ops = yaml.safe_load(overlay["patches"][0]["patch"])
    env = {op["value"]["name"]: op["value"]["value"] for op in ops
           if op["path"].endswith("/env/-")}
    probes = {op["path"].split("/")[-3]: op["value"] for op in ops if "Probe" in op["path"]}
    assert probes == dict.fromkeys(("startupProbe", "readinessProbe", "livenessProbe"),
                                   int(env["SKILL_ROUTER_SERVER_HEALTH_PORT"]))
    assert {"SKILL_ROUTER_SERVER_TLS_CERT_FILE", "SKILL_ROUTER_SERVER_TLS_KEY_FILE"} <= set(env)


def test_sharded_build_jobs_split_by_completion_index_and_merge_through_the_bucket() -> None:
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
    assert out == served_index()  # the partials travel through the bucket the servers read
    assert_clones_the_catalog(shard_pod)
    assert_clones_the_catalog(merge_pod)
    assert store_url_source(merge_pod) == STORE_SECRET  # the merge learns from the traffic


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
        assert_clones_the_catalog(pod)
    whole_pod = docs["skill-router-index-gpu"]["spec"]["template"]["spec"]
    whole = whole_pod["containers"][0]["args"]
    assert whole[0] == "index" and whole[whole.index("--out") + 1] == served_index()
    assert store_url_source(whole_pod) == STORE_SECRET
    shards = docs["skill-router-index-shards-gpu"]["spec"]
    assert shards["completionMode"] == "Indexed"
    command = " ".join(shards["template"]["spec"]["containers"][0]["args"])
    assert f'--shard "${{JOB_COMPLETION_INDEX}}/{shards["completions"]}"' in command
    assert f"--out {served_index()}" in command  # where the CPU merge Job fetches the partials


def test_the_dockerfile_picks_the_torch_build_by_argument() -> None:
    text = (K8S.parent / "Dockerfile").read_text()
    assert "ARG TORCH_INDEX=cpu" in text
    assert "download.pytorch.org/whl/${TORCH_INDEX}" in text
    assert "--build-arg TORCH_INDEX=cu128" in text  # the documented GPU build command


def test_the_tenancy_overlay_mounts_the_principals_file_from_the_secret() -> None:
    overlay = yaml.safe_load((K8S / "tenancy" / "kustomization.yaml").read_text())
    assert overlay["resources"] == ["../base"]
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
