"""With the PostgreSQL store a Route's session work is one statement on the turn's path (the
claim folded in while the owner is unknown here), what a turn shows is written after it, a
conversation's next turn on the same replica writes what is still waiting in its own
statement, and another replica may reveal a skill again but never loses one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from router.access.model import Principal
from router.config import Config, FeedbackConfig
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.errors import PermissionDenied
from router.learning import pg_shown_sql
from router.learning.pg_store import PgStore
from router.routing.model import RouteQuery, RouteResult
from tests.support.learning import CSV, SKILL_OF, make_index
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)
from tests.unit.learning.test_pg_store import new_database


@dataclass
class Statements:
    """The statements the store ran, by the name of the thread that ran them."""

    ran: list[tuple[str, str]]

    def turn_path(self) -> list[str]:
        """Those of the turns: the calling thread's and the turn openers' (not the writers')."""
        return [sql for thread, sql in self.ran
                if thread == threading.current_thread().name
                or thread.startswith("session-turns")]


@pytest.fixture()
def statements(monkeypatch: pytest.MonkeyPatch) -> Statements:
    seen = Statements([])
    real = PgStore._execute

    def counted(store: PgStore, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        seen.ran.append((threading.current_thread().name, sql))
        return real(store, sql, params)

    monkeypatch.setattr(PgStore, "_execute", counted)
    return seen


@pytest.fixture()
def engines(postgres_dsn: str, tmp_path: Path,  # noqa: F811
            monkeypatch: pytest.MonkeyPatch, statements: Statements) -> Iterator[list[Engine]]:
    """Two replicas (their own index folders) sharing one database."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    url = new_database(postgres_dsn, f"turn_{abs(hash(str(tmp_path))) % 10**12}")
    config = Config(feedback=FeedbackConfig(store_url=url))
    opened = [Engine.open(make_index(tmp_path / name), config, HashEmbedder())
              for name in ("a", "b")]
    yield opened
    for engine in opened:
        engine.close()


def route(engine: Engine, session: str, message: str = CSV, who: str = "",
          **fields: Any) -> RouteResult:
    return engine.route(RouteQuery(message=message, session_id=session,
                                   caller=replace(Principal(who), name=who), **fields))


def first_shown(result: RouteResult) -> list[str]:
    return [s.name for s in result.skills if s.first_shown]


def test_a_turn_is_one_statement_the_first_with_its_claim(engines: list[Engine],
                                                          statements: Statements) -> None:
    engine = engines[0]
    statements.ran.clear()
    first = route(engine, "conv")
    assert statements.turn_path() == [pg_shown_sql.START_CLAIMING]
    assert first_shown(first)
    statements.ran.clear()
    again = route(engine, "conv")
    assert statements.turn_path() == [pg_shown_sql.START]  # the owner is known: no claim
    opener = [thread for thread, sql in statements.ran if sql == pg_shown_sql.START]
    assert opener[0].startswith("session-turns")  # sent as the turn starts, read as it reveals
    assert first_shown(again) == []  # what the first turn showed was written with it
    ran = statements.ran
    assert pg_shown_sql.ADD not in [sql for _, sql in ran]  # nothing left for the writer


def test_a_turn_shows_what_it_writes_after_it_answers(engines: list[Engine],
                                                      statements: Statements) -> None:
    engine, other = engines
    shown = first_shown(route(engine, "later"))
    assert shown and pg_shown_sql.ADD not in statements.turn_path()
    engine.sessions.close()  # what waits is written (by the writer, or now)
    writes = [sql for _, sql in statements.ran if sql == pg_shown_sql.ADD]
    assert len(writes) == 1
    assert set(shown) <= set(other.sessions.shown("later").shown)


def test_another_replica_may_repeat_a_reveal_but_never_loses_one(
        engines: list[Engine]) -> None:
    engine, other = engines
    shown = first_shown(route(engine, "both"))
    route(other, "both")  # at once: it may reveal them again (not written yet), or not
    engine.sessions.close()
    remembered = engine.sessions.shown("both").shown
    assert set(shown) <= set(remembered)
    assert first_shown(route(engine, "both")) == []
    assert first_shown(route(other, "both")) == []


def test_anothers_session_is_refused_and_left_alone(engines: list[Engine],
                                                     statements: Statements) -> None:
    engine, other = engines
    route(engine, "mine", who="alice")
    before = engine.sessions.shown("mine")
    statements.ran.clear()
    with pytest.raises(PermissionDenied):
        route(other, "mine", who="bob", revealed_skills=(SKILL_OF[CSV],))
    assert statements.turn_path() == [pg_shown_sql.START_CLAIMING]
    after = engine.sessions.shown("mine")
    assert (after.turn, after.shown) == (before.turn, before.shown)
    with pytest.raises(PermissionDenied):  # settled now: refused without the database
        route(other, "mine", who="bob")


def test_a_reset_forgets_what_was_waiting(engines: list[Engine]) -> None:
    engine = engines[0]
    shown = first_shown(route(engine, "reset"))
    again = route(engine, "reset", context_reset=True)
    assert first_shown(again) == shown
