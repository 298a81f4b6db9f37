"""Over a real PostgreSQL: a row the database refuses for its content (a NUL character) is set
aside in a dead-letter file, counted and logged once; the rows beside it are written, the store
never reads as down, and a replica restarted on a spool holding such a row replays the rest, so
a session's owner is the database's on the restarted replica too."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from router.config import FeedbackConfig
from router.learning.pg_store import PgStore, spool_folder
from router.learning.rows import ROUTE, Row
from router.learning.spool import Spool
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:  # noqa: F811
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_dsn + "postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield postgres_dsn + name


def route(route_id: str, session: str, principal: str, query: str = "merge pdfs") -> Row:
    return Row(kind=ROUTE, ts=time.time(), session=session, route_id=route_id, query=query,
               retrieved=("pdf",), principal=principal)


def stored(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {str(r[0]) for r in conn.execute("SELECT route_id FROM feedback_rows")}


def test_a_nul_row_is_set_aside_and_the_store_stays_up(database: str, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    policy = FeedbackConfig(min_sessions=1, spool_dir=str(tmp_path / "spool"))
    store = PgStore(database, policy)
    store.append(route("r-nul", "s-nul", "mallory", "hello\x00world"), durable=False)
    store.append(route("r-ok", "s-ok", "alice"), durable=False)
    store.flush()
    store.append(route("r-nul2", "s-nul", "mallory", "again\x00"))  # a durable write too
    backlog = store.backlog()
    assert not backlog.unreachable and backlog.spooled == 0
    assert getattr(backlog, "set_aside", 0) == 2
    assert stored(database) == {"r-ok"}
    assert [r.route_id for r in store.read_rows()] == ["r-ok"]  # an operator's read: OK
    dead = Path(spool_folder(policy, store.location)) / "dead-letter.jsonl"
    lines = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [line["row"]["route_id"] for line in lines] == ["r-nul", "r-nul2"]
    assert "NUL" in lines[0]["refused"] and dead.stat().st_mode & 0o077 == 0
    warned = [r for r in caplog.records if "refused a route row" in r.getMessage()
              and r.levelname == "WARNING"]
    assert len(warned) == 1 and "unreachable" not in caplog.text
    store.close()


def test_a_restart_on_a_spool_holding_a_nul_row_keeps_sessions_to_their_owners(
        database: str, tmp_path: Path) -> None:
    policy = FeedbackConfig(min_sessions=1, spool_dir=str(tmp_path / "spool"))
    location = PgStore(database, policy)
    folder = spool_folder(policy, location.location)
    location.close()
    spool = Spool(folder, policy.spool_max_rows)  # what a stopped replica left behind
    spool.append([route("r-nul", "s-x", "mallory", "bad\x00row"),
                  route("r-victim", "s-victim", "victim")], durable=True)
    spool.close()
    restarted = PgStore(database, policy)
    assert restarted.claim_session("s-victim", "mallory") == "victim"
    assert not restarted.backlog().unreachable
    other = PgStore(database, policy)  # another replica decides the same
    assert other.claim_session("s-victim", "mallory") == "victim"
    deadline = time.monotonic() + 60
    while restarted.backlog().spooled:
        assert time.monotonic() < deadline, "the spool was not replayed"
        time.sleep(0.05)
    assert stored(database) == {"r-victim"} and getattr(restarted.backlog(), "set_aside", 0) == 1
    for store in (restarted, other):
        store.close()
