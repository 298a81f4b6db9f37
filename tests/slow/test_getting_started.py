"""docs/getting-started.md, run as written: every ``sh`` block in order, from the repository's
root, against the real packaged model. What changes: ``HOME`` is a temporary folder (the page's
``~/my-skills`` and ``~/my-index``), the demo's ports are free ones (``make run`` gets
``PORT=`` and ``INDEX=``, and ``make`` takes ``.venv/`` as set up: ``-o``), a command that
serves until Ctrl-C runs in the background until its port answers a health check, and
``claude mcp add NAME -- COMMAND`` runs COMMAND (the stdio door, which ends at end of input)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support import REPO
from tests.support.ports import free_ports

PAGE = REPO / "docs" / "getting-started.md"
SERVES = "# serves until Ctrl-C"
STAMP = ".venv/.installed"  # make's setup target: the test's own environment is set up
# what each block (found by a command in it) must print on stdout
EXPECTED = {"route \"extract the tables": ["<available_skills>", "pdf-extract",
                                           "<skill_content"],
            "--version": ["skill-router "],
            "index --no-home": ["index ", "1 skills, 0 diagnostics", "deploy-checklist"],
            "route \"roll back billing\"": ["deploy-checklist", '"skill_count": 1'],
            "reindex --target": ['"swapped": true', "deploy-checklist"]}


def blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def _ready(port: int, proc: subprocess.Popen[str], log: Path) -> None:
    """Until the server says it listens on ``port`` (its process ending first is a failure),
    then its health check must answer SERVING."""
    assert proc.stdout is not None
    for line in proc.stdout:  # make's echo of its commands, then the server's own lines
        if f"listening on 127.0.0.1:{port}" in line:
            break
    else:
        pytest.fail(f"the server on {port} ended: {log.read_text()[-3000:]}")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                          timeout=30, wait_for_ready=True)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


@pytest.fixture()
def servers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:  # each in its own group: make and the server it started
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_every_command_on_the_page_runs(tmp_path: Path,
                                        servers: list[subprocess.Popen[str]]) -> None:
    demo, mine = free_ports(2)
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    activate = ""
    for n, block in enumerate(blocks(PAGE.read_text(encoding="utf-8"))):
        script = block.replace("50051", str(demo)).replace("50052", str(mine))
        if SERVES in script:
            command = script.split(SERVES)[0].strip()
            port = demo if command.startswith("make run") else mine
            command = command.replace("make run", f"make -o {STAMP} run PORT={demo} "
                                                  f"INDEX={tmp_path / 'index_data'}")
            log = tmp_path / f"server-{n}.log"
            with log.open("w") as err:  # stdout is read until it says it listens
                servers.append(subprocess.Popen(["bash", "-c", activate + command], cwd=REPO,
                                                env=env, stdout=subprocess.PIPE, stderr=err,
                                                text=True, start_new_session=True))
            _ready(port, servers[-1], log)
            continue
        script = re.sub(r"^claude mcp add \S+ -- (.*)$", r"\1 </dev/null", script, flags=re.M)
        done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + activate + script],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr and "pre-processing" not in done.stderr, done.stderr
        for marker, wanted in EXPECTED.items():
            if marker in script:
                missing = [w for w in wanted if w not in done.stdout]
                assert not missing, f"{script}\n{done.stdout}"
        if "source .venv/bin/activate" in script:
            activate = "source .venv/bin/activate\n"
    assert len(servers) == 2 and activate
    assert "discovering skills" in (tmp_path / "server-0.log").read_text()  # make run's index
