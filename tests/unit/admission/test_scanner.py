"""The content scan's adapter: the worker's answer read into findings, a warning when the
scanner is not installed, and (where it is installed) a real scan of hostile skills."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from router.admission.model import Finding, Severity
from router.admission.scanner import parse_output, scan
from tests.support import REPO

HOSTILE = Path(__file__).with_name("hostile")


def test_the_workers_answer_becomes_findings() -> None:
    answer = {"version": "2.3.2", "errors": {"/s/b": "SkillLoadError: no SKILL.md"},
              "results": {"/s/a": [
                  {"rule": "PIPELINE_TAINT_FLOW", "severity": "HIGH", "message": "curl into sh",
                   "file": "SKILL.md", "line": 7},
                  {"rule": "X", "severity": "SAFE", "message": "fine", "file": ""}]}}
    outcome = parse_output(json.dumps(answer))
    assert outcome.ran and outcome.version == "2.3.2"
    assert outcome.findings == {"/s/a": [Finding("scan:PIPELINE_TAINT_FLOW", Severity.HIGH,
                                                 "curl into sh (SKILL.md:7)", "scanner",
                                                 "SKILL.md")]}
    assert outcome.warnings == ("the content scan could not read /s/b: SkillLoadError: no "
                                "SKILL.md",)


def test_without_the_scanner_a_warning_says_the_scan_did_not_run(tmp_path: Path) -> None:
    outcome = scan([str(HOSTILE / "blob-runner")], path=str(tmp_path))
    assert not outcome.ran and outcome.findings == {}
    assert len(outcome.warnings) == 1
    assert outcome.warnings[0].startswith(
        "the content scan did not run: cisco-ai-skill-scanner is not installed")


def test_nothing_to_scan_runs_nothing() -> None:
    assert scan([], path="/nonexistent").warnings == ()


def _installed() -> str:
    path = os.environ.get("ROUTER_TEST_SCANNER_PATH", str(REPO / ".scanner"))
    if not (Path(path) / "skill_scanner").is_dir():
        pytest.skip("cisco-ai-skill-scanner is not installed (make scanner)")
    return path


def test_a_real_scan_of_hostile_skills() -> None:
    path = _installed()
    folders = [str(HOSTILE / n) for n in ("blob-runner", "smuggled-notes", "anything-helper")]
    outcome = scan(folders, path=path)
    assert outcome.ran, outcome.warnings
    worst = {Path(k).name: max(f.severity.rank for f in v) for k, v in outcome.findings.items()}
    assert worst["blob-runner"] >= Severity.HIGH.rank
    assert worst["smuggled-notes"] >= Severity.HIGH.rank
    assert all(f.source == "scanner" and f.rule.startswith("scan:")
               for v in outcome.findings.values() for f in v)
