"""The commands that open a PostgreSQL feedback store: ``--feedback-store`` on ``stats`` and
``examples``, and ``feedback migrate`` (the schema ahead of a rollout; a file store copied in)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from router.admission.approvals import legacy_path, write_file
from router.admission.policy import Approval
from router.cli import main
from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.pg_migrations import MIGRATIONS
from router.learning.pg_store import PgStore
from router.learning.rows import ACTIVATE, ROUTE, Row
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)
from tests.unit.learning.test_pg_store import new_database


@pytest.fixture(autouse=True)
def _spool_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:  # noqa: F811
    yield new_database(postgres_dsn, f"t_{uuid.uuid4().hex[:16]}")


def traffic(session: str, principal: str = "alice") -> list[Row]:
    now = time.time()
    return [Row(kind=ROUTE, ts=now, session=session, route_id=f"r-{session}",
                query="merge two pdfs", shown=("pdf",), retrieved=("pdf",), principal=principal),
            Row(kind=ACTIVATE, ts=now, session=session, skill="pdf", route_id=f"r-{session}",
                query="merge two pdfs", shown=("pdf",), principal=principal)]


def test_migrate_makes_the_schema_of_an_empty_database(
        database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feedback", "migrate", "--to", database]) == 0
    assert f"schema at version {len(MIGRATIONS)} (applied 1, 2, 3, 4)" in capsys.readouterr().out
    with psycopg.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM feedback_rows").fetchone() == (0,)
    assert main(["feedback", "migrate", "--to", database]) == 0
    assert "applied" not in capsys.readouterr().out  # nothing pending the second time


def test_migrate_copies_a_file_store_once(database: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "index"
    files = FileStore(index)
    for row in traffic("s1") + traffic("s2", principal="bob"):
        files.append(row)
    files.put_approval(Approval("tool", DIGEST, "alice", 1.0))
    write_file(legacy_path(index), [Approval("older", DIGEST, "bob", 0.5)])  # before the store
    files.close()
    assert main(["feedback", "migrate", "--from", str(index), "--to", database]) == 0
    out = capsys.readouterr().out
    assert "copied 4 of 4 rows" in out and "copied 2 approvals" in out
    assert main(["feedback", "migrate", "--from", str(index), "--to", database]) == 0
    out = capsys.readouterr().out
    assert "copied 0 of 4 rows" in out and "copied 0 approvals" in out
    store = PgStore(database, FeedbackConfig())
    assert [a.key for a in store.read_approvals()] == ["older", "tool"]
    assert sorted(r.rid for r in store.read_rows()) == sorted(r.rid for r in files.read_rows())
    assert store.claim_session("s2", "alice") == "bob"  # ownership came along with the Routes
    store.close()
    assert main(["feedback", "migrate", "--from", str(tmp_path / "none"), "--to",
                 database]) == 2


DIGEST = "sha256:" + "e" * 64


def test_admission_approves_and_revokes_in_the_store_the_flag_names(
        database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "index"
    flags = ["--index", str(index), "--feedback-store", database]
    assert main(["admission", "approve", "vendor/tool", DIGEST, "--by", "alice", "--note",
                 "reviewed", *flags]) == 0
    assert not (index / "feedback").exists()  # kept in the database, not the index folder
    store = PgStore(database, FeedbackConfig())
    assert [(a.key, a.digest, a.by, a.note) for a in store.read_approvals()] == [
        ("vendor/tool", DIGEST, "alice", "reviewed")]
    assert main(["admission", "revoke", "vendor/tool", *flags]) == 0
    assert store.read_approvals() == []
    assert main(["admission", "revoke", "vendor/tool", *flags]) != 0
    store.close()


def test_stats_and_examples_read_the_store_the_flag_names(
        database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = PgStore(database, FeedbackConfig())
    for session in ("s1", "s2"):
        for row in traffic(session):
            store.append(row)
    store.close()
    empty = tmp_path / "index"  # no files of its own: the rows are the database's
    assert main(["stats", "--index", str(empty), "--feedback-store", database, "--json"]) == 0
    shown = {s["skill"]: s for s in json.loads(capsys.readouterr().out)["skills"]}
    assert (shown["pdf"]["routed"], shown["pdf"]["activated"]) == (2, 2)
    assert main(["examples", "list", "--index", str(empty), "--feedback-store", database,
                 "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(e["skill"], e["query"]) for e in listed} == {("pdf", "merge two pdfs")}
    assert not (empty / "feedback").exists()


def test_migrate_says_what_to_check_when_the_database_cannot_be_reached(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feedback", "migrate", "--to", "postgresql://someone:pw@127.0.0.1:1/x"]) == 1
    err = capsys.readouterr().err
    assert "cannot reach the feedback store postgresql://someone@127.0.0.1:1/x" in err
    assert "pw" not in err.replace("password", "")
