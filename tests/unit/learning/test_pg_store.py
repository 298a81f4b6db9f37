"""The PostgreSQL store (``router.learning.pg_store``) runs the feedback store contract on a
real server (``tests.support.postgres``), and decides ownership in the database."""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from router.config import FeedbackConfig
from router.errors import PermissionDenied
from router.learning.backends import open_store
from router.learning.pg_migrations import MIGRATIONS
from router.learning.pg_store import PgStore, safe_location
from router.learning.recorder import MAX_ROUTE_ID_CHARS, Recorder
from router.learning.store import FeedbackStore
from tests.support.feedback_contract import POLICY, FeedbackStoreContract, route
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)


def new_database(server: str, name: str) -> str:
    with psycopg.connect(server + "postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return server + name


@pytest.fixture(autouse=True)
def _spool_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spool's default folder under the test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


class TestPgStore(FeedbackStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_dsn: str) -> None:  # noqa: F811
        self.server = postgres_dsn

    def open(self, place: Path, policy: FeedbackConfig = POLICY) -> FeedbackStore:
        # One database per place: opening the same place again is another replica.
        name = "c_" + hashlib.sha256(str(place).encode()).hexdigest()[:20]
        return open_store(None, policy, new_database(self.server, name))


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:  # noqa: F811
    yield new_database(postgres_dsn, f"t_{uuid.uuid4().hex[:16]}")


def test_two_replicas_racing_for_a_session_give_it_one_owner(database: str) -> None:
    stores = [PgStore(database), PgStore(database)]
    for attempt in range(20):
        session, barrier = f"s{attempt}", threading.Barrier(8)
        owners: list[str] = []

        def claim(store: PgStore, principal: str, session: str = session,
                  barrier: threading.Barrier = barrier, owners: list[str] = owners) -> None:
            barrier.wait()
            owners.append(store.claim_session(session, principal))

        threads = [threading.Thread(target=claim, args=(stores[i % 2], f"p{i}"))
                   for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(owners)) == 1, owners  # every claimant was told the same owner
    for store in stores:
        store.close()


def test_migrations_run_once_when_replicas_open_at_once(database: str) -> None:
    opened: list[PgStore] = []
    threads = [threading.Thread(target=lambda: opened.append(PgStore(database)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 4
    with psycopg.connect(database) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    for store in opened:
        store.close()


def test_a_password_is_in_no_location_nor_message(caplog: pytest.LogCaptureFixture) -> None:
    secret = "s3cr3t-pw"
    url = "postgresql://someone:" + secret + "@127.0.0.1:1/nowhere"
    assert secret not in safe_location(url)
    assert safe_location(url) == "postgresql://someone@127.0.0.1:1/nowhere"
    store = open_store(None, POLICY, url)  # opens: a server down is waited out, not fatal
    with pytest.raises(OSError) as caught:
        store.read_rows()
    store.close()
    assert secret not in str(caught.value)
    assert "unreachable" in str(caught.value)
    assert "127.0.0.1:1" in caplog.text and secret not in caplog.text


def test_a_route_id_is_its_routers_and_rows_reach_a_new_replica(database: str) -> None:
    first = PgStore(database)
    first.append(route("r1", "s1", principal="alice"), durable=False)
    first.flush()
    other = PgStore(database)
    assert other.claim_session("s1", "bob") == "alice"
    assert [r.route_id for r in other.session_routes("s1")] == ["r1"]
    with psycopg.connect(database) as conn:
        owner = conn.execute("SELECT principal FROM feedback_owners WHERE kind = 'route' "
                             "AND id = 'r1'").fetchone()
    assert owner == ("alice",)
    for store in (first, other):
        store.close()


def test_the_configured_url_opens_the_database(database: str, tmp_path: Path) -> None:
    store = open_store(tmp_path, FeedbackConfig(store_url=database))
    assert isinstance(store, PgStore) and store.location == safe_location(database)
    store.close()


def test_the_store_url_is_read_from_the_environment() -> None:
    from router.config.loading import load_config

    url = "postgresql://router@db:5432/feedback"
    assert load_config(None, {"SKILL_ROUTER_FEEDBACK_STORE_URL": url}).feedback.store_url == url


def test_an_engine_on_the_database_counts_another_stores_rows(database: str,
                                                               tmp_path: Path) -> None:
    from dataclasses import replace

    from router.config import Config
    from router.encoders.hashing import HashEmbedder
    from router.engine import Engine
    from router.learning.rows import ACTIVATE, Row
    from tests.support.feedback_contract import NOW
    from tests.support.skills import skill_record
    from tests.support.snapshots import snapshot_of

    config = Config()
    config = replace(config, feedback=replace(config.feedback, store_url=database))
    served = Engine(snapshot_of([skill_record("pdf-tools", "Extracts text from PDF files.")]),
                    config, HashEmbedder(), index_dir=tmp_path)
    elsewhere = PgStore(database)  # another replica's store
    for session in ("a", "b"):
        elsewhere.append(Row(kind=ACTIVATE, ts=NOW, session=session, skill="pdf-tools"))
    counted = {s.skill: s.activated for s in served.review.stats().skills}
    assert counted == {"pdf-tools": 2}
    assert not (tmp_path / "feedback").exists()  # nothing in the index folder
    elsewhere.close()
    served.close()


def test_a_route_id_tells_every_replica_its_owner_before_its_row_arrives(database: str) -> None:
    first, other = PgStore(database), PgStore(database)
    route_id = first.new_route_id("alice")  # no row written: the id alone
    assert len(route_id) <= MAX_ROUTE_ID_CHARS
    assert other.route_made_for(route_id, "alice") is True
    assert other.route_made_for(route_id, "bob") is False
    nonce, _, mac = route_id.partition(".")
    assert other.route_made_for(f"{nonce}.{'0' * len(mac)}", "alice") is False  # forged
    assert other.route_made_for(nonce, "bob") is None  # no MAC: the stored Route decides
    recorder = Recorder(other)
    with pytest.raises(PermissionDenied):
        recorder.check_route(route_id, "bob")
    recorder.check_route(route_id, "alice")
    for store in (first, other):
        store.close()
