"""The first hour's commands against a real index and a real server: an empty build refused
unless asked for and then served with a warning, stage lines (and ``--quiet``), a closed pipe
ending quietly, ``activate``, and ``route``, ``explain``, ``info`` and ``activate`` asking a
running server with ``--target`` what they answer in-process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.cli import main
from router.service.server import RouterServer
from tests.support.learning import PDF, make_index, open_engine
from tests.support.processes import cli_argv, cli_process
from tests.support.servers import start_server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_index(tmp_path_factory.mktemp("first-hour"))


@pytest.fixture(scope="module")
def running(index: Path) -> Iterator[RouterServer]:
    server = start_server(open_engine(index))
    yield server
    server.stop(0)


def _index_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return ["index", "--no-home", "--no-project", "--root", str(root), "--out", str(out),
            "--model", "hash", *extra]


def test_an_empty_build_fails_unless_allowed_and_is_served_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty, out = tmp_path / "empty", tmp_path / "index"
    empty.mkdir()
    code, stdout, err = run(capsys, *_index_argv(empty, out))
    assert (code, stdout) == (2, "") and not (out / "CURRENT").exists()
    assert f"error: no skills found in {empty}" in err and "--allow-empty" in err
    assert run(capsys, *_index_argv(empty, out, "--allow-empty"))[0] == 0
    with cli_process("serve", "--index", str(out), "--host", "127.0.0.1", "--port", "0",
                     "--metrics-port", "0", "--poll-seconds", "0") as proc:
        assert proc.stdout is not None and "0 skills" in proc.stdout.readline()  # listening
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "WARNING" in stderr and "with 0 skills: every Route answers an empty catalog" in stderr


def test_index_says_its_stages_unless_quiet(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "skills" / "pdf").mkdir(parents=True)
    (tmp_path / "skills" / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Extracts text from PDF files.\n---\nSteps.\n")
    code, out, err = run(capsys, *_index_argv(tmp_path / "skills", tmp_path / "a"))
    assert code == 0 and out.startswith("index ") and "1 skills, 0 diagnostics" in out
    assert err.splitlines()[:2] == ["discovering skills", "discovered 1 skills (0 diagnostics)"]
    assert len(err.splitlines()) >= 3
    code, out, err = run(capsys, *_index_argv(tmp_path / "skills", tmp_path / "b", "--quiet"))
    assert code == 0 and out.startswith("index ") and err == ""


def test_a_closed_pipe_ends_quietly(index: Path) -> None:
    proc = subprocess.Popen(cli_argv("route", PDF, "--index", str(index)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the catalog is written (| head -0)
    _, stderr = proc.communicate(timeout=120)
    assert (proc.returncode, stderr) == (0, "")


def test_activate_prints_the_skill_content(index: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "activate", "skill-0", "--index", str(index))
    assert code == 0 and out.startswith('<skill_content name="skill-0">')
    code, _, err = run(capsys, "activate", "no-such-skill", "--index", str(index))
    assert code == 1 and err.startswith("error: ") and "no-such-skill" in err


def test_target_answers_as_in_process(index: Path, running: RouterServer,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    target = ["--target", f"127.0.0.1:{running.port}"]
    local, remote = ["--index", str(index)], target
    for argv in (["route", PDF], ["explain", PDF], ["activate", "skill-0"]):
        code, here, _ = run(capsys, *argv, *local)
        assert code == 0 and here
        code, there, _ = run(capsys, *argv, *remote)
        assert code == 0 and there == here, argv
    code, here, _ = run(capsys, "explain", PDF, "--json", *local)
    code, there, _ = run(capsys, "explain", PDF, "--json", *remote)
    assert code == 0 and json.loads(there)["skills"] == json.loads(here)["skills"]
    assert json.loads(here)["skills"][0] == "skill-0"
    assert [(c["name"], c["matched_field"], c["matched_step"])
            for c in json.loads(there)["candidates"]] == \
        [(c["name"], c["matched_field"], c["matched_step"])
         for c in json.loads(here)["candidates"]]
    code, there, _ = run(capsys, "info", *remote)
    assert code == 0 and json.loads(there)["skill_count"] == 6
    code, there, _ = run(capsys, "route", PDF, "--json", *remote)
    assert code == 0 and json.loads(there)["skills"][0]["name"] == "skill-0"
    code, _, err = run(capsys, "route", PDF, *local, *remote)
    assert code == 2 and "not both" in err
