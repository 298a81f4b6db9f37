"""A turn is a sequence of named stages over frozen values: Route runs ``ROUTE``, a served
Route ``TURN``; a new stage is one function and one line in a sequence; the recorder gets the
turn's retrieval text and the skills it showed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from router.engine import Engine
from router.engine.turn import ROUTE, TURN, Parts, Stage, Turn, run
from router.errors import PermissionDenied
from router.learning.file_store import FileStore
from router.learning.rows import ROUTE as ROUTE_ROW
from router.routing.model import Reason, RouteQuery
from tests.support.catalogs import PRINCIPALS, three_catalogs
from tests.support.indexes import open_engine


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return open_engine(three_catalogs(tmp_path))


def test_the_stages_are_named_in_order() -> None:
    assert [s.__name__ for s in ROUTE] == ["validate", "claim", "remember", "encode", "route",
                                          "render", "reveal"]
    assert TURN[:len(ROUTE)] == ROUTE
    assert [s.__name__ for s in TURN[len(ROUTE):]] == ["record", "activate_named"]


def _start(engine: Engine, query: RouteQuery) -> tuple[Parts, Turn]:
    parts: Parts = engine._parts  # the stages the Engine runs, run here by hand
    return parts, Turn(query, engine.snapshot, engine.embedder)


def test_route_is_its_stages_run_in_order(engine: Engine) -> None:
    query = RouteQuery("deploy the payments service")
    parts, turn = _start(engine, query)
    assert run(parts, turn, ROUTE) == engine.route(query)
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.query = query  # type: ignore[misc]  # a stage returns a new value


def test_a_new_stage_is_one_function_and_one_line(engine: Engine) -> None:
    query = RouteQuery("deploy the payments service", top_k=1)

    def veto(parts: Parts, turn: Turn) -> Turn:  # say, a reranker that trusts no retrieval
        assert turn.ranked is not None
        plan = turn.ranked.plan
        kept = [p for p in plan.picked if p[1] is not Reason.RETRIEVED]
        return dataclasses.replace(turn, ranked=dataclasses.replace(
            turn.ranked, plan=dataclasses.replace(plan, picked=kept)))

    stages: tuple[Stage, ...] = (*ROUTE[:5], veto, *ROUTE[5:])
    plain = engine.route(query)
    vetoed = run(*_start(engine, query), stages)
    assert [s.name for s in plain.skills if s.reason is Reason.RETRIEVED] == ["deploy"]
    assert vetoed.skills == () and vetoed.catalog_text != plain.catalog_text


def test_the_claim_stage_refuses_another_callers_session(engine: Engine) -> None:
    engine.route(RouteQuery("deploy it", session_id="s1", caller=PRINCIPALS["pay"]))
    with pytest.raises(PermissionDenied):
        engine.route(RouteQuery("deploy it", session_id="s1", caller=PRINCIPALS["org"]))


def test_the_recorder_gets_the_turns_text_and_shown_skills(engine: Engine,
                                                          tmp_path: Path) -> None:
    result = engine.route_turn(RouteQuery("/git-commit my staged changes",
                                          session_id="s1"))
    assert result.route_id and result.explicit_content  # the named skill activated
    engine.close()
    rows = [r for r in FileStore(tmp_path / "index").read_rows() if r.kind == ROUTE_ROW]
    assert [(r.query, r.forced) for r in rows] == [("my staged changes", True)]
    assert any(key.endswith("git-commit") for key in rows[0].shown)
