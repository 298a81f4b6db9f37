"""What a newcomer's first commands meet: a mistyped folder named, folders and errors counted
right, ``--version``, ``config`` printing by default, the closest known name for a mistyped
setting, one ``--json`` and one ``--index INDEX`` on every command, help on every argument."""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from router.cli import build_parser, main
from router.config import load_config
from router.errors import InvalidRequest
from tests.support.skills import write_skill


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("flag", ["--root", "--bundled", "--project", "--home"])
def test_a_missing_folder_is_named_and_a_usage_error(tmp_path: Path, flag: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "mycatt"
    code, out, err = run(capsys, "list", "--no-home", "--no-project", flag, str(typo))
    assert (code, out) == (2, "") and err == f"error: {flag} {typo}: no such folder\n"
    code, _, err = run(capsys, "index", "--no-home", "--no-project", "--root", str(typo),
                       "--out", str(tmp_path / "index"), "--model", "hash")
    assert code == 2 and f"--root {typo}: no such folder" in err
    assert not (tmp_path / "index").exists()  # nothing was built


def test_validate_counts_folders_and_errors(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("alpha", "beta", "gamma", "delta"):
        write_skill(tmp_path / name, description=f"Handles {name} files. Use for {name}.")
    write_skill(tmp_path / "broken", description=None)  # no description: not loaded
    code, _, err = run(capsys, "validate", "--no-lint", str(tmp_path))
    assert code == 1
    assert err.splitlines()[-1] == "checked 5 skill folders (4 skills loaded): 1 error, 0 warnings"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"skill-router {version('skill-router')}\n"


def test_config_prints_without_print(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "config")
    assert code == 0 and yaml.safe_load(out)["server"]["port"] == 50051
    code, out, _ = run(capsys, "config", "--json")
    assert code == 0 and json.loads(out)["routing"]["top_k"] == 5


def test_an_unknown_key_is_named_with_the_closest_known_one(tmp_path: Path) -> None:
    path = tmp_path / "router.yaml"
    path.write_text("routing:\n  topk: 3\n")
    with pytest.raises(InvalidRequest, match=r"unknown key 'topk' \(did you mean top_k\?\)"):
        load_config(path, env={})
    path.write_text("routng:\n  top_k: 3\n")
    with pytest.raises(InvalidRequest, match=r"unknown section 'routng' \(did you mean routing"):
        load_config(path, env={})


@pytest.fixture
def warnings_seen(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.WARNING, logger="router.config.suggest")
    yield caplog


def test_an_unknown_variable_is_named_once_with_the_closest_known_one(
        warnings_seen: pytest.LogCaptureFixture) -> None:
    env = {"SKILL_ROUTER_ROUTING_TOPK": "3", "SKILL_ROUTER_TOKEN": "t",
           "SKILL_ROUTER_OPS_ACCEPT_TOKEN_ENV": "SKILL_ROUTER_CONSOLE_TOKENS",
           "SKILL_ROUTER_CONSOLE_TOKENS": "a,b", "PATH": "/bin"}
    assert load_config(env=env).routing.top_k == 5  # ignored, but not silently
    load_config(env=env)
    said = [r.getMessage() for r in warnings_seen.records]
    assert said == ["SKILL_ROUTER_ROUTING_TOPK is not a setting and is ignored; did you mean "
                    "SKILL_ROUTER_ROUTING_TOP_K?"]


def _parsers(parser: argparse.ArgumentParser,
             path: str = "skill-router") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_argument_has_help_and_one_spelling() -> None:
    missing, metavars, without_json = [], set(), []
    for path, parser in _parsers(build_parser()):
        flags = {flag for action in parser._actions for flag in action.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {choice.dest for choice in action._choices_actions if choice.help}
                missing += [f"{path} {name}" for name in action.choices if name not in helped]
            elif not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
            if "--index" in action.option_strings:
                metavars.add(action.metavar)
            if ("--format" in action.option_strings and "json" in (action.choices or ())
                    and "--json" not in flags):
                without_json.append(path)  # --format json stays, beside the one spelling
    assert (missing, metavars, without_json) == ([], {"INDEX"}, [])
