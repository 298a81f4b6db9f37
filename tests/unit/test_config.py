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
    assert load_config(env={"SKILL_ROUTER_ADMISSION_SCAN_WORKERS": "1"}
                       ).admission.scan_workers == 1
    with pytest.raises(InvalidRequest, match=r"admission\.scan_workers must be >= 0"):
        load_config(env={"SKILL_ROUTER_ADMISSION_SCAN_WORKERS": "-1"})


def test_modes_are_read_into_their_enums_and_keep_their_words(tmp_path: Path) -> None:
    import json

    from router.config import (
        ActivationMode,
        CandidateMode,
        FineTuneMode,
        Int8Cpu,
        Precision,
        replace,
    )

    path = tmp_path / "c.yaml"
    path.write_text("routing: {activation_mode: file}\nindex: {int8_cpu: no-vnni}\n",
                    encoding="utf-8")
    config = load_config(path, env={"SKILL_ROUTER_INDEX_PRECISION": "fp16"})
    assert config.routing.activation_mode is ActivationMode.FILE
    assert config.index.int8_cpu is Int8Cpu.NO_VNNI and config.index.precision is Precision.FP16
    assert config.index.fine_tune_encoder is FineTuneMode.AUTO
    assert replace(config.index, second_epoch="always").second_epoch is CandidateMode.ALWAYS
    assert replace(config.routing, activation_mode="tool").activation_mode is ActivationMode.TOOL
    shown = json.loads(json.dumps(config.to_dict()))  # what `skill-router config` prints
    assert (shown["routing"]["activation_mode"], shown["index"]["int8_cpu"],
            shown["index"]["precision"]) == ("file", "no-vnni", "fp16")
    with pytest.raises(InvalidRequest, match=r"routing\.activation_mode: 'files' is not one "
                                             r"of tool, file"):
        replace(config.routing, activation_mode="files")
