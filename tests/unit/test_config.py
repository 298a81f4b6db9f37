from pathlib import Path

import pytest

from router.config import load_config
from router.errors import InvalidRequest


def test_defaults() -> None:
    cfg = load_config(env={})
    assert cfg.routing.top_k == 5 and cfg.routing.max_always_on == 5
    assert cfg.discovery.precedence == ("project", "user", "org", "bundled")
    assert cfg.server.port == 50051


def test_yaml_then_env_overrides(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("routing:\n  top_k: 7\n  always_on: [a, b]\ndiscovery:\n"
                    "  trust_project: true\n", encoding="utf-8")
    cfg = load_config(path, env={"SKILL_ROUTER_ROUTING_TOP_K": "3",
                                 "SKILL_ROUTER_DISCOVERY_ORG_ROOTS": "/x, /y"})
    assert cfg.routing.top_k == 3
    assert cfg.routing.always_on == ("a", "b")
    assert cfg.discovery.trust_project is True
    assert cfg.discovery.org_roots == ("/x", "/y")


def test_unknown_keys_and_bad_values_are_actionable(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("routing:\n  topk: 7\n", encoding="utf-8")
    with pytest.raises(InvalidRequest, match=r"unknown key 'topk' \(did you mean top_k\?\)"):
        load_config(path, env={})
    with pytest.raises(InvalidRequest, match="SKILL_ROUTER_ROUTING_TOP_K"):
        load_config(env={"SKILL_ROUTER_ROUTING_TOP_K": "many"})
