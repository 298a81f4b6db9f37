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


FAKE_SCANNER = {
    "skill_scanner/__init__.py": "__version__ = '9.9'\n",
    "skill_scanner/core/__init__.py": "",
    "skill_scanner/core/analyzer_factory.py": "def build_analyzers(policy, **kw):\n    return []\n",
    "skill_scanner/core/scan_policy.py": ("class ScanPolicy:\n    @staticmethod\n"
                                          "    def default():\n        return None\n"),
    "skill_scanner/core/scanner.py": (
        "import os\n"
        "class _F:\n"
        "    rule_id, severity, description, file_path, line_number, analyzer = "
        "'PID', 'LOW', '', 'SKILL.md', 1, 'x'\n"
        "    title = str(os.getpid())\n"
        "class SkillScanner:\n"
        "    def __init__(self, analyzers, policy):\n        pass\n"
        "    def scan_skill(self, folder, lenient):\n"
        "        if folder.endswith('crash'):\n            os._exit(3)\n"
        "        return type('R', (), {'findings': [_F()]})()\n"),
}


def _fake_scanner(root: Path) -> str:
    for name, text in FAKE_SCANNER.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return str(root)


def _pid(outcome: object) -> str:
    [finding] = [f for found in outcome.findings.values() for f in found]  # type: ignore[attr-defined]
    return finding.message.split(" ")[0]


def test_one_worker_answers_every_scan_of_a_process_and_a_dead_one_is_replaced(
        tmp_path: Path) -> None:
    from router.admission import scan_process

    path = _fake_scanner(tmp_path / "scanner")
    try:
        first, second = (scan([str(tmp_path / n)], path=path) for n in ("a", "b"))
        assert first.ran and second.ran and _pid(first) == _pid(second)  # one process
        died = scan([str(tmp_path / "crash")], path=path)
        assert not died.ran and "its worker exited 3" in died.warnings[0]
        again = scan([str(tmp_path / "c")], path=path)
        assert again.ran and _pid(again) != _pid(first)  # a fresh worker took over
    finally:
        scan_process.stop_all()
    assert scan_process._workers == {}
