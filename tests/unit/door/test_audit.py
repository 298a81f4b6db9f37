"""``router.door.audit``: JSON lines, every file 0600 whatever the umask (a new one after a
rotation too, an existing wider one narrowed), rotated by size, ``-`` for stderr."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.door.audit import AuditLog, open_audit
from router.errors import InvalidRequest


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_lines_are_json_with_a_timestamp_and_the_file_is_private(
        tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(str(path))
    audit.write({"method": "/router.v1.SkillRouter/Route", "code": "OK"})
    audit.close()
    (line,) = [json.loads(text) for text in path.read_text().splitlines()]
    assert line["method"] == "/router.v1.SkillRouter/Route" and line["ts"].endswith("+00:00")
    assert _mode(path) == 0o600


def test_an_existing_wider_file_is_narrowed_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"old": 1}\n')
    path.chmod(0o644)
    audit = AuditLog(str(path))
    audit.write({"new": 2})
    audit.close()
    assert _mode(path) == 0o600
    assert len(path.read_text().splitlines()) == 2


def test_rotated_by_size_and_every_file_private(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(str(path), max_bytes=200, backups=2)
    for n in range(20):
        audit.write({"n": n, "pad": "x" * 40})
    audit.close()
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    assert all(_mode(f) == 0o600 for f in files)
    assert all(f.stat().st_size <= 200 for f in files)
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["n"] == 19


def test_dash_writes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    audit = open_audit("-")
    assert audit is not None
    audit.write({"code": "OK"})
    audit.close()
    assert json.loads(capsys.readouterr().err)["code"] == "OK"


def test_none_without_a_path_and_a_clear_error_for_an_unwritable_one(tmp_path: Path) -> None:
    assert open_audit("") is None
    with pytest.raises(InvalidRequest, match="cannot open the audit log"):
        AuditLog(str(tmp_path / "missing" / "audit.jsonl"))
