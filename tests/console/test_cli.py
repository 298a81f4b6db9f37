"""The console as operators start it, in subprocesses on real ports: inside ``serve
--ops-port`` (with the server's own tokens) and standalone ``skill-router ops --target`` (with
its own accepted tokens), and both refusing to start open beyond loopback."""

from __future__ import annotations

import os
import signal
import subprocess

import httpx2

from router.service.server import RouterServer
from tests.console.conftest import PDF_SKILL, Catalog
from tests.support import REPO
from tests.support.ports import free_port
from tests.support.processes import cli_argv, cli_process

TOKEN_VAR = "SKILL_ROUTER_TEST_CONSOLE_TOKENS"
TOKENS = ("serve-token-a", "serve-token-b")
ROUTE = "/route?message=merge+two+PDF+files"


def console_url(proc: subprocess.Popen[str]) -> str:
    """The console's URL from the ``ops console: URL/route`` line (read until it comes)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ops console: "):
            return line.split()[2].removesuffix("/route")
    raise AssertionError(f"no console line; stderr: {proc.stderr.read() if proc.stderr else ''}")


def assert_gated(url: str, token: str) -> None:
    refused = httpx2.get(f"{url}{ROUTE}", timeout=30.0)
    assert refused.status_code == 401 and PDF_SKILL not in refused.text
    answer = httpx2.get(f"{url}{ROUTE}", headers={"Authorization": f"Bearer {token}"},
                        timeout=30.0)
    assert answer.status_code == 200 and f'data-skill="{PDF_SKILL}"' in answer.text


def test_serve_runs_the_console_with_its_own_tokens(catalog: Catalog) -> None:
    port = free_port()
    with cli_process("serve", "--index", str(catalog.index), "--port", "0", "--metrics-port",
                     "0", "--poll-seconds", "0", "--token-env", TOKEN_VAR, "--ops-port",
                     str(port), env={TOKEN_VAR: ",".join(TOKENS)}) as proc:
        url = console_url(proc)
        assert url == f"http://127.0.0.1:{port}"
        assert_gated(url, TOKENS[1])  # the console presents the server's token to the server
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0


def test_ops_against_a_replica_with_accepted_tokens(grpc_server: RouterServer) -> None:
    with cli_process("ops", "--target", f"127.0.0.1:{grpc_server.port}", "--port", "0",
                     "--accept-token-env", TOKEN_VAR, env={TOKEN_VAR: TOKENS[0]}) as proc:
        assert_gated(console_url(proc), TOKENS[0])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_argv(*args), cwd=REPO, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def test_both_refuse_an_open_console_beyond_loopback(catalog: Catalog) -> None:
    standalone = run("ops", "--target", "127.0.0.1:1", "--host", "0.0.0.0", "--port", "0")
    assert standalone.returncode != 0
    assert "refusing to serve the ops console" in standalone.stderr
    inside = run("serve", "--index", str(catalog.index), "--port", "0", "--metrics-port", "0",
                 "--ops-port", str(free_port()), env={"SKILL_ROUTER_OPS_HOST": "0.0.0.0"})
    assert inside.returncode != 0 and "refusing to serve the ops console" in inside.stderr
    assert "listening" not in inside.stdout
