"""The content scan's adapter: the worker's answer read into findings, a warning when the
scanner is not installed, and (where it is installed) a real scan of hostile skills."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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


def _started_workers(monkeypatch: pytest.MonkeyPatch,
                     refused_after: int | None = None) -> list[Any]:
    """Every scan worker started from now on, in order; with ``refused_after``, the start
    after that many raises OSError (as when the process runs out of file descriptors)."""
    from router.admission import scan_process

    started: list[scan_process.ScanProcess] = []
    made = scan_process.ScanProcess

    def start(path: str) -> scan_process.ScanProcess:
        if len(started) == refused_after:
            raise OSError("too many open files")
        started.append(made(path))
        return started[-1]

    monkeypatch.setattr(scan_process, "ScanProcess", start)
    return started


def test_a_large_scan_is_shared_out_over_workers_and_one_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from router.admission import scan_process, scanner

    monkeypatch.setattr(scanner, "CHUNK", 3)
    monkeypatch.setattr(scanner, "PARALLEL_FROM", 6)
    started = _started_workers(monkeypatch)
    path = _fake_scanner(tmp_path / "scanner")
    folders = [str(tmp_path / f"skill-{i:02d}") for i in range(11)]  # four requests
    try:
        small = scan(folders[:5], path=path, workers=3)  # under PARALLEL_FROM: the kept one
        assert small.ran and len(started) == 1
        outcome = scan(folders, path=path, workers=3)
        assert outcome.ran and sorted(outcome.findings) == folders
        assert all(len(found) == 1 for found in outcome.findings.values())
        pids = {found[0].message.split(" ")[0] for found in outcome.findings.values()}
        assert pids <= {str(p._proc.pid) for p in started}
        assert len(started) == 3  # the kept worker and two more for this scan ...
        assert scan_process._workers[path] == [started[0]]  # ... which are stopped after it
        assert [p._proc.poll() is None for p in started] == [True, False, False]
        failed = scan([*folders[:7], str(tmp_path / "crash"), *folders[7:]], path=path,
                      workers=2)
        assert not failed.ran and failed.findings == {}
        assert "its worker exited 3" in failed.warnings[0]
        assert path not in scan_process._workers  # forgotten: the next scan starts afresh
    finally:
        scan_process.stop_all()


def test_a_worker_that_cannot_start_leaves_none_of_the_others_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from router.admission import scan_process, scanner

    monkeypatch.setattr(scanner, "PARALLEL_FROM", 2)
    monkeypatch.setattr(scanner, "CHUNK", 1)
    started = _started_workers(monkeypatch, refused_after=2)
    path = _fake_scanner(tmp_path / "scanner")
    try:
        outcome = scan([str(tmp_path / n) for n in "abc"], path=path, workers=3)
        assert not outcome.ran
        assert outcome.warnings == ("the content scan did not run: its worker failed: "
                                    "too many open files",)
        assert [p._proc.poll() is None for p in started] == [True, False]  # the extra stopped
        assert scanner.scan([str(tmp_path / "a")], path=path).ran  # the kept one still serves
    finally:
        scan_process.stop_all()
