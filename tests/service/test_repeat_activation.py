"""A repeated Activate in one conversation answers ``already_active`` and is not a second
activation: not stored, not counted by SkillStats, not learned from; with the files under the
index and with the PostgreSQL store alike (a real server on port 0, the hash embedder)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.client import SkillRouterClient
from tests.support.learning import PDF, make_index, open_engine
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)
from tests.support.servers import start_server
from tests.unit.learning.test_pg_store import new_database


@pytest.fixture(params=["files", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[SkillRouterClient]:
    store = ""
    if request.param == "postgresql":
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the spool's folder
        server = request.getfixturevalue("postgres_dsn")
        store = new_database(server, f"r_{uuid.uuid4().hex[:16]}")
    running = start_server(open_engine(make_index(tmp_path), store_url=store))
    try:
        with SkillRouterClient(f"127.0.0.1:{running.port}", timeout=10.0) as caller:
            yield caller
    finally:
        running.stop(0)


def test_two_sessions_activating_a_skill_twice_count_two(client: SkillRouterClient) -> None:
    name = ""
    for session in ("one", "two"):
        turn = client.route(PDF, session_id=session, top_k=1)
        name = turn.skills[0].name
        first = client.activate(name, session_id=session, route_id=turn.route_id)
        again = client.activate(name, session_id=session, route_id=turn.route_id)
        assert first.content and again.already_active and not again.content
    counted = {s.skill: s.activated for s in client.skill_stats().skills}
    assert counted[name] == 2
    learned = client.list_examples(skill=name)
    assert learned.total == 2 and {e.query for e in learned.examples} == {PDF}
