"""``/metrics`` of ``serve`` with tokens, in subprocesses on real ports: 401 without a bearer
token or with a wrong one, the counters with an accepted one; ``--open-metrics`` opens it for a
closed scrape network; a server without tokens serves it open as before; with a principals
file it opens to an ``ops`` principal's token."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.support.ports import free_port
from tests.support.principals import entry, write_principals
from tests.support.processes import cli_process

TOKEN_VAR = "SKILL_ROUTER_TEST_METRICS_TOKENS"
TOKENS = ("metrics-token-a", "metrics-token-b")


def scrape_url(index_dir: Path, *flags: str, tokens: bool = True) -> tuple[str, list[str]]:
    port = free_port()
    argv = ["serve", "--index", str(index_dir), "--port", "0", "--poll-seconds", "0",
            "--metrics-port", str(port), *flags]
    if tokens:
        argv += ["--token-env", TOKEN_VAR]
    return f"http://127.0.0.1:{port}/metrics", argv


@pytest.mark.parametrize("flags, tokens, open_without", [((), True, False),
                                                         (("--open-metrics",), True, True),
                                                         ((), False, True)])
def test_metrics_ask_for_a_token_when_the_server_has_tokens(
        index_dir: Path, flags: tuple[str, ...], tokens: bool, open_without: bool) -> None:
    url, argv = scrape_url(index_dir, *flags, tokens=tokens)
    with cli_process(*argv, env={TOKEN_VAR: ",".join(TOKENS)}) as proc:
        assert proc.stdout is not None and "listening" in proc.stdout.readline()
        bare = httpx2.get(url, timeout=30.0)
        wrong = httpx2.get(url, headers={"Authorization": "Bearer nope"}, timeout=30.0)
        right = httpx2.get(url, headers={"Authorization": f"Bearer {TOKENS[1]}"},
                           timeout=30.0)
    assert right.status_code == 200 and "skill_router_index_skills" in right.text
    for refused in (bare, wrong):
        if open_without:
            assert refused.status_code == 200 and "skill_router_index_skills" in refused.text
        else:
            assert refused.status_code == 401 and "skill_router" not in refused.text
            assert refused.headers["www-authenticate"].startswith("Bearer")


def test_the_service_monitor_sends_a_token_the_secret_declares() -> None:
    import yaml

    from tests.support import REPO

    monitor = yaml.safe_load((REPO / "deploy/k8s/monitoring/servicemonitor.yaml").read_text())
    secret = yaml.safe_load((REPO / "deploy/k8s/secret.yaml").read_text())
    [endpoint] = monitor["spec"]["endpoints"]
    ref = endpoint["bearerTokenSecret"]
    assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"]


def test_metrics_open_to_an_ops_principal_of_the_principals_file(
        index_dir: Path, tmp_path: Path) -> None:
    path = write_principals(tmp_path / "principals.yaml", entry("scraper", "tok-scrape", ["ops"]),
                            entry("gateway", "tok-gateway", ["route"]))
    url, argv = scrape_url(index_dir, "--principals", str(path), tokens=False)
    with cli_process(*argv) as proc:
        assert proc.stdout is not None and "listening" in proc.stdout.readline()
        replies = {token: httpx2.get(url, headers={"Authorization": f"Bearer {token}"},
                                     timeout=30.0) for token in ("tok-scrape", "tok-gateway")}
        bare = httpx2.get(url, timeout=30.0)
    assert replies["tok-scrape"].status_code == 200
    assert "skill_router_index_skills" in replies["tok-scrape"].text
    assert replies["tok-gateway"].status_code == 401 and bare.status_code == 401
