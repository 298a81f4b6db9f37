"""The content scan's cache: only new digests are scanned, the file stays what ``json.dump``
writes, and what a process kept of the file is used only while the file is the one it kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from router.admission import scan_cache
from router.admission.model import Finding, Severity
from router.admission.scanner import ScanOutcome

VERSION = "2.3.2"


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The folders each scan was asked for; a folder named ``risky*`` has one finding."""
    asked: list[list[str]] = []

    def scan(folders: list[str], path: str = "", workers: int = 0) -> ScanOutcome:
        asked.append(list(folders))
        return ScanOutcome(VERSION, {f: [Finding("yara", Severity.HIGH, f"found in {f}",
                                                 "scanner", "run.sh")]
                                         if Path(f).name.startswith("risky") else []
                                         for f in folders})

    monkeypatch.setattr(scan_cache, "scan", scan)
    monkeypatch.setattr(scan_cache, "installed_version", lambda path: ScanOutcome(VERSION))
    return asked


def test_only_new_digests_are_scanned_and_the_file_is_json_dumps(
        tmp_path: Path, scanned: list[list[str]]) -> None:
    folders = {"/s/risky-a": "sha256:1", "/s/plain-b": "sha256:2"}
    first = scan_cache.cached_scan(folders, "scanner", tmp_path)
    assert scanned == [["/s/plain-b", "/s/risky-a"]]
    assert first.findings["/s/plain-b"] == [] and first.findings["/s/risky-a"][0].rule == "yara"
    changed = {**folders, "/s/risky-c": "sha256:3", "/s/plain-b": "sha256:4"}
    again = scan_cache.cached_scan(changed, "scanner", tmp_path)
    assert scanned[1] == ["/s/plain-b", "/s/risky-c"]  # the unchanged folder is not scanned
    assert again.findings == {**{f: [] for f in changed},
                              "/s/risky-a": first.findings["/s/risky-a"],
                              "/s/risky-c": [Finding("yara", Severity.HIGH,
                                                     "found in /s/risky-c", "scanner",
                                                     "run.sh")]}
    text = (tmp_path / scan_cache.SCAN_CACHE).read_text("utf-8")
    data = json.loads(text)
    assert text == json.dumps(data) and data["version"] == VERSION
    assert set(data["skills"]) == {"sha256:1", "sha256:2", "sha256:3", "sha256:4"}


def test_a_cache_file_replaced_by_another_process_is_read_again(
        tmp_path: Path, scanned: list[list[str]]) -> None:
    folders = {"/s/risky-a": "sha256:1"}
    scan_cache.cached_scan(folders, "scanner", tmp_path)
    path = tmp_path / scan_cache.SCAN_CACHE
    other = {"version": VERSION, "skills": {"sha256:1": [
        {"rule": "other", "severity": "low", "message": "m", "source": "scanner",
         "file": ""}]}}
    replacement = path.with_name("replacement.json")
    replacement.write_text(json.dumps(other), "utf-8")
    os.replace(replacement, path)
    outcome = scan_cache.cached_scan(folders, "scanner", tmp_path)
    assert len(scanned) == 1  # the digest was in the new file: no scan
    assert [f.rule for f in outcome.findings["/s/risky-a"]] == ["other"]


def test_the_scan_is_asked_of_as_many_workers_as_configured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def scan(folders: list[str], path: str = "", workers: int = 0) -> ScanOutcome:
        seen.append(workers)
        return ScanOutcome(VERSION, {f: [] for f in folders})

    monkeypatch.setattr(scan_cache, "scan", scan)
    monkeypatch.setattr(scan_cache, "installed_version", lambda path: ScanOutcome(VERSION))
    scan_cache.cached_scan({"/s/a": "sha256:1"}, "scanner", tmp_path, workers=3)
    scan_cache.cached_scan({"/s/b": "sha256:2"}, "scanner", tmp_path)
    assert seen == [3, 0]
