"""The manifests under deploy/k8s read as data: every workload's pod, where a build clones
its catalog, where a pod's variables come from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support import REPO

DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
STORE_SECRET = {"name": "skill-router-auth", "key": "feedback-store-url"}
SKILLS_CONFIG = "skill-router-skills"  # the ConfigMap naming the catalog's repository


def manifests() -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every YAML document under deploy/k8s, with its file (overlays and Jobs included)."""
    for path in sorted(K8S.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path, doc


def pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The pod template of a Deployment, Job or CronJob; None for other kinds."""
    if doc.get("kind") in {"Deployment", "Job"}:
        return dict(doc["spec"]["template"]["spec"])
    if doc.get("kind") == "CronJob":
        return dict(doc["spec"]["jobTemplate"]["spec"]["template"]["spec"])
    return None


def pods() -> dict[str, dict[str, Any]]:
    """Every workload's pod spec by ``Kind/name``."""
    found = {}
    for _, doc in manifests():
        spec = pod_spec(doc)
        if spec is not None:
            found[f"{doc['kind']}/{doc['metadata']['name']}"] = spec
    return found


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def store_url_source(pod: dict[str, Any]) -> dict[str, Any]:
    """Where the main container's SKILL_ROUTER_FEEDBACK_STORE_URL comes from."""
    ref = env_of(pod["containers"][0])["SKILL_ROUTER_FEEDBACK_STORE_URL"]["valueFrom"]
    return dict(ref["secretKeyRef"])


def served_index() -> str:
    """The ``--index`` of the Deployment's servers."""
    deployment = yaml.safe_load((K8S / "base" / "deployment.yaml").read_text())
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return str(args[args.index("--index") + 1])


def assert_clones_the_catalog(pod: dict[str, Any]) -> None:
    """An initContainer clones the ConfigMap's repository once into an emptyDir, which the
    build mounts where its ``--root`` lies."""
    (init,) = pod["initContainers"]
    assert init["image"].startswith("registry.k8s.io/git-sync/git-sync:v4")
    flags = dict(a.removeprefix("--").partition("=")[::2] for a in init["args"])
    assert "one-time" in flags  # exits once cloned, so the build can start
    env = env_of(init)
    for flag, key in (("repo", "repo"), ("ref", "ref")):
        variable = flags[flag].removeprefix("$(").removesuffix(")")
        assert env[variable]["valueFrom"]["configMapKeyRef"] == {"name": SKILLS_CONFIG,
                                                                 "key": key}
    (mount,) = init["volumeMounts"]
    assert mount["mountPath"] == flags["root"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mount["name"]]
    main = pod["containers"][0]
    command = " ".join(main["args"])
    assert f"--root {flags['root']}/{flags['link']}" in command
    mounted = {m["name"]: m["mountPath"] for m in main["volumeMounts"]}
    assert mounted[mount["name"]] == flags["root"]
