"""``skill-router config --print``: the effective configuration after environment overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from router.cli import main
from router.config import load_config


def test_new_server_settings_are_reachable_by_env() -> None:
    config = load_config(env={"SKILL_ROUTER_SERVER_METRICS_PORT": "0",
                              "SKILL_ROUTER_SERVER_INDEX_POLL_SECONDS": "0.5",
                              "SKILL_ROUTER_SERVER_LOG_FORMAT": "json",
                              "SKILL_ROUTER_SERVER_MAX_REQUEST_BYTES": "65536",
                              "SKILL_ROUTER_INDEX_KEEP_VERSIONS": "5",
                              "SKILL_ROUTER_INDEX_REINDEX_WAIT_SECONDS": "3"})
    assert (config.server.metrics_port, config.server.index_poll_seconds) == (0, 0.5)
    assert (config.server.log_format, config.server.max_request_bytes) == ("json", 65536)
    assert (config.index.keep_versions, config.index.reindex_wait_seconds) == (5, 3.0)


def test_config_print_applies_file_then_env(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "router.yaml"
    path.write_text("routing:\n  top_k: 7\nserver:\n  port: 6000\n")
    monkeypatch.setenv("SKILL_ROUTER_SERVER_PORT", "7000")
    assert main(["--config", str(path), "config", "--print"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    assert shown["routing"]["top_k"] == 7 and shown["server"]["port"] == 7000
    assert main(["--config", str(path), "config", "--print", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["server"]["metrics_port"] == 9464


def test_the_int8_query_encoder_is_the_default(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILL_ROUTER_INDEX_QUERY_BACKEND", raising=False)
    assert main(["config", "--print"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["index"]["query_backend"] == "onnx-int8"
    for other in ("onnx", "torch"):  # still selectable
        monkeypatch.setenv("SKILL_ROUTER_INDEX_QUERY_BACKEND", other)
        assert main(["config", "--print"]) == 0
        assert yaml.safe_load(capsys.readouterr().out)["index"]["query_backend"] == other


@pytest.mark.parametrize("password", ["Base64/Pw+Q==", "sec@retPW", "a/b@c+d=e"])
def test_config_print_masks_the_store_password(password: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILL_ROUTER_FEEDBACK_STORE_URL",
                       f"postgresql://router:{password}@db:5432/feedback")
    assert main(["config", "--print"]) == 0
    out = capsys.readouterr().out
    assert yaml.safe_load(out)["feedback"]["store_url"] == \
        "postgresql://router:***@db:5432/feedback"
    pieces = [password, *(p for p in password.replace("@", "/").split("/") if len(p) >= 4)]
    assert not [piece for piece in pieces if piece in out]
