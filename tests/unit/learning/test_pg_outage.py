"""The PostgreSQL store through an outage of a real server: calls keep answering, their rows
wait in the spool and reach the database once it is back, each once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from router.config import FeedbackConfig
from router.errors import Unavailable
from router.learning.pg_store import PgStore
from router.learning.rows import ACTIVATE, ROUTE, Row
from tests.support.postgres import Cluster, cluster

WAIT_S = 60.0  # the writer retries every few seconds: observed, never slept on
POLICY = FeedbackConfig(min_sessions=1)


@pytest.fixture
def server() -> Iterator[Cluster]:
    with cluster() as started:
        yield started


def stored(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [(str(k), str(r)) for k, r in
                conn.execute("SELECT kind, rid FROM feedback_rows ORDER BY rid")]


def eventually_stored(url: str, count: int) -> list[tuple[str, str]]:
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            rows = stored(url)
            if len(rows) >= count:
                return rows
        except psycopg.Error:
            pass  # still starting, or not yet migrated
        assert time.monotonic() < deadline, "the spooled rows did not reach the database"
        time.sleep(0.05)


def test_calls_answer_with_the_database_stopped_and_their_rows_arrive_after(
        server: Cluster, tmp_path: Path) -> None:
    url = server.dsn + "postgres"
    policy = FeedbackConfig(min_sessions=1, spool_dir=str(tmp_path / "spool"))
    store = PgStore(url, policy)
    server.stop()
    started = time.monotonic()
    rows = []
    for i in range(10):
        route = Row(kind=ROUTE, ts=time.time(), session=f"s{i}", route_id=f"r{i}",
                    query="merge two pdfs", retrieved=("pdf",), principal="alice")
        activation = Row(kind=ACTIVATE, ts=time.time(), session=f"s{i}", skill="pdf",
                         route_id=f"r{i}", principal="alice")
        store.append(route, durable=False)
        store.append(activation)  # answers: kept in the spool, synced
        assert store.claim_session(f"s{i}", "alice") == "alice"  # decided here meanwhile
        assert store.find_route(f"r{i}") is not None  # this replica's own Route
        rows += [route, activation]
    elapsed = time.monotonic() - started
    assert elapsed < 20.0, elapsed  # gross: no call waited out a pool timeout of 30 s
    assert store.backlog().unreachable
    assert store.backlog().spooled == 10  # the Routes' rows join the spool off the calls
    server.start()
    found = eventually_stored(url, 20)
    assert sorted(found) == sorted((r.kind, r.rid) for r in rows)  # each once
    deadline = time.monotonic() + WAIT_S
    while store.backlog().spooled or store.backlog().unreachable:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    store.close()
    assert len(stored(url)) == 20


def test_a_replica_starts_with_the_database_down_and_migrates_when_it_returns(
        server: Cluster, tmp_path: Path) -> None:
    url = server.dsn + "postgres"
    server.stop()
    policy = FeedbackConfig(min_sessions=1, spool_dir=str(tmp_path / "spool"))
    store = PgStore(url, policy)  # starts: the schema is made once the server answers
    store.append(Row(kind=ACTIVATE, ts=time.time(), skill="pdf", session="s", principal="a"))
    with pytest.raises(Unavailable, match="unreachable"):  # an operator's read: UNAVAILABLE
        store.read_rows()
    server.start()
    assert [kind for kind, _ in eventually_stored(url, 1)] == [ACTIVATE]
    store.close()
