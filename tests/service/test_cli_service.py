"""``skill-router index | route | info | serve`` against a temporary skills folder."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.cli import main
from router.v1 import router_pb2 as pb
from tests.support.processes import cli_process, run_cli
from tests.support.servers import make_stub
from tests.support.skills import add_skill, write_skill

SOURCES = {
    "pdf-tools": "Extracts text and tables from PDF files and merges PDF documents.",
    "git-helper": "Writes git commit messages and explains git history.",
    "csv-analyst": "Analyses CSV spreadsheets with summary statistics and charts.",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(index dir, stdout, stderr) of ``skill-router index`` over a folder with one broken skill."""
    base = tmp_path_factory.mktemp("cli")
    skills = base / "skills"
    for name, description in SOURCES.items():
        add_skill(skills, name, description)
    write_skill(skills / "broken", description=None, body="no description\n")
    (base / "empty").mkdir()
    out = base / "index"
    result = run_cli("index", "--bundled", str(skills), "--project", str(base / "empty"),
                     "--home", str(base / "empty"), "--out", str(out), "--model", "hash")
    return out, result.stdout, result.stderr


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_index_prints_summary_and_diagnostics(built: tuple[Path, str, str]) -> None:
    out, stdout, stderr = built
    assert "3 skills, 1 diagnostics" in stdout
    stages = [line for line in stderr.splitlines() if not line.startswith("error")]
    assert stages[0] == "discovering skills" and "discovered 4 skills" not in stderr
    assert any(line.startswith("embedded 3 skills in ") and line.endswith(" skills/s)")
               for line in stages)  # the rate is the embedding stage's alone
    assert any(line.startswith("writing version ") for line in stages) and len(stages) >= 5
    assert "broken" in stderr and "error" in stderr.lower()
    assert (out / "CURRENT").is_file()


def test_info_prints_json(built: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(["info", "--index", str(built[0])], capsys)
    info = json.loads(stdout)
    assert code == 0 and info["skill_count"] == 3 and info["model"] == "hash-256"


def test_route_prints_catalog(built: tuple[Path, str, str],
                              capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(["route", "merge these PDF documents", "--index", str(built[0]),
                           "--format", "markdown", "--top-k", "1"], capsys)
    assert code == 0 and "- **pdf-tools**:" in stdout


def test_route_json(built: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(["route", "write a git commit message", "--index", str(built[0]),
                           "--history", "earlier turn", "--json"], capsys)
    result = json.loads(stdout)
    assert code == 0
    assert result["skills"][0]["name"] == "git-helper"
    assert result["skills"][0]["reason"] == "retrieved"
    assert result["catalog_text"].endswith("</available_skills>\n")


def test_route_rejects_empty_message(built: tuple[Path, str, str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run(["route", "", "--index", str(built[0])], capsys)
    assert code == 2 and stderr.startswith("error: message is empty")


def test_missing_index_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run(["info", "--index", str(tmp_path)], capsys)
    assert code == 1 and "skill-router index" in stderr


def test_serve_answers_and_stops_on_sigterm(built: tuple[Path, str, str]) -> None:
    with cli_process("serve", "--index", str(built[0]), "--host", "127.0.0.1",
                     "--port", "0") as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line and "reflection: on" in line
        address = line.split("listening on ", 1)[1].split()[0]
        with grpc.insecure_channel(address) as chan:
            grpc.channel_ready_future(chan).result(timeout=10)
            health = health_pb2_grpc.HealthStub(chan).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            reply = make_stub(chan).Route(pb.RouteRequest(message="PDF tables"))
            assert [s.name for s in reply.skills][:1] == ["pdf-tools"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
