"""The content scan by default: with ``admission.scanner_path`` unset the product finds the
scanner in ``.scanner`` (where `make setup` installs it) and says which one ran; without it,
one diagnostic names the command that installs it, and `admission check` and `validate` say
"content scan: off". `admission check` prints per rule how many skills it flags."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from router.admission import scanner
from router.admission.fused import bm25_scores
from router.cli import main
from tests.support import fake_scanner
from tests.support.registry_server import skill_md

CONDUCT = Path(__file__).with_name("conduct")


def test_locate_follows_the_setting_then_the_folders(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    assert scanner.locate("off").off
    assert scanner.locate("", env={scanner.SETTING_ENV: "none"}).off
    assert scanner.locate("/opt/scan", env={}).path == "/opt/scan"
    assert scanner.locate("", env={scanner.SETTING_ENV: "/x"}, folders=[empty]).path == "/x"
    missing = scanner.locate("", env={}, folders=[empty])
    assert missing.path == "" and not missing.off
    assert "`make scanner`" in missing.why and str(empty) in missing.why
    installed = fake_scanner.install(tmp_path / ".scanner")
    assert scanner.locate("", env={}, folders=[empty, installed]).path == str(installed)


def test_the_default_folders_are_the_working_folder_and_the_checkout() -> None:
    folders = scanner.default_folders()
    assert folders[0] == Path.cwd() / ".scanner"
    assert folders[-1] == Path(scanner.__file__).resolve().parents[2] / ".scanner"


@pytest.fixture
def unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """admission.scanner_path unset, and .scanner looked for in ``tmp_path`` alone."""
    monkeypatch.delenv(scanner.SETTING_ENV, raising=False)
    folder = tmp_path / ".scanner"
    monkeypatch.setattr(scanner, "default_folders", lambda: [folder])
    for name, body in (("calm-notes", "Takes notes."), ("odd-notes", "FAKE-HOSTILE")):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_bytes(skill_md(name, body=body))
    return folder


def test_a_build_scans_with_no_configuration(tmp_path: Path, unset: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    args = ["index", "--bundled", str(tmp_path / "skills"), "--no-project", "--no-home",
            "--out", str(tmp_path / "index"), "--model", "hash"]
    assert main(args) == 0
    err = capsys.readouterr().err
    missing = [line for line in err.splitlines() if "content scan did not run" in line]
    assert len(missing) == 1 and "`make scanner`" in missing[0], err
    fake_scanner.install(unset)
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"content scan: {scanner.SCANNER} 9.9.9 ({unset})" in err.splitlines()
    assert "content scan did not run" not in err
    assert fake_scanner.scanned(unset) == sorted(fake_scanner.scanned(unset))
    assert len(fake_scanner.scanned(unset)) == 2


def test_check_and_validate_say_whether_the_scan_ran(tmp_path: Path, unset: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["admission", "check", "--root", str(tmp_path / "skills")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("content scan: off (cisco-ai-skill-scanner is not installed")
    assert main(["validate", str(tmp_path / "skills" / "odd-notes")]) == 0
    assert "content scan: off (" in capsys.readouterr().err
    fake_scanner.install(unset)
    assert main(["admission", "check", "--root", str(tmp_path / "skills")]) == 1
    captured = capsys.readouterr()
    assert f"content scan: {scanner.SCANNER} 9.9.9" in captured.err
    assert "QUARANTINED odd-notes" in captured.out
    assert main(["validate", str(tmp_path / "skills" / "odd-notes")]) == 0
    captured = capsys.readouterr()
    assert "admission: scan:FAKE_RULE (high)" in captured.out
    assert f"content scan: {scanner.SCANNER} 9.9.9" in captured.err


def test_check_prints_per_rule_how_many_skills_it_flags(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["admission", "check", "--scanner", "off", "--root",
                 str(CONDUCT / "hostile"), "--root", str(CONDUCT / "benign")]) == 1
    captured = capsys.readouterr()
    assert "content scan: off (it is turned off" in captured.err
    lines = captured.out.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("rule ")))
    rows = {line.split()[0]: (int(line.split()[1]), int(line.split()[2]))
            for line in lines[head + 1:] if line and not line.startswith(("of ", "60 "))}
    assert rows["secret-exfiltration"] == (9, 9)
    assert rows["script-exfiltration"] == (9, 9)
    assert rows["broad-description"] == (6, 6)
    assert "of 60 skills" in lines
    assert main(["admission", "check", "--scanner", "off", "--policy", "folder",
                 str(CONDUCT / "hostile")]) == 0
    folder = capsys.readouterr().out.splitlines()
    assert any(line.split()[:3] == ["human-out-of-loop", "7", "0"] for line in folder)
    assert main(["admission", "check", "--scanner", "off"]) != 0
    assert "name a folder of skill folders" in capsys.readouterr().err


def test_the_hub_measure_leaves_the_logging_to_the_application() -> None:
    bm25_scores(["notes and lists", "tables"], ["take notes"])
    assert logging.getLogger("bm25s").level == logging.NOTSET
