"""Catalogs that keep the prompt cache, over a real gRPC server on port 0: ``stable_text`` the
same on every turn, session and Reindex that leaves the always-on set alone; ``reveal_text``
only what the session was not shown yet (by any replica of a PostgreSQL store);
``revealed_skills`` and ``context_reset``; every format; an empty catalog; the session's
memory kept to its owner; an activation of a skill revealed turns ago teaches."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.config import Config, FeedbackConfig, IndexConfig, RoutingConfig
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.learning import CSV, DOCKER, GIT, PDF, SKILL_OF, make_index, positives
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)
from tests.support.servers import Served, serving
from tests.support.skills import add_skill

ALWAYS = "skill-5"


def eventually(check: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while not check():
        assert time.monotonic() < deadline, "not observed in time"
        pause.wait(0.02)


def engine(index: Path, **feedback: Any) -> Engine:
    config = Config(index=IndexConfig(reindex_wait_seconds=30.0),
                    routing=RoutingConfig(always_on=(ALWAYS,)),
                    feedback=FeedbackConfig(**feedback))
    return Engine.open(index, config, HashEmbedder())


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    return make_index(tmp_path)


@pytest.fixture()
def served(index: Path) -> Iterator[Served]:
    with serving(engine(index)) as running:
        yield running


def turn(stub: pb_grpc.SkillRouterStub, message: str, session: str = "",
         **fields: Any) -> pb.RouteResponse:
    reply: pb.RouteResponse = stub.Route(pb.RouteRequest(message=message, session_id=session,
                                                         top_k=1, **fields))
    return reply


def revealed(reply: pb.RouteResponse) -> list[str]:
    """The skills marked first shown, checked against the names in ``reveal_text``."""
    names = [s.name for s in reply.skills if s.first_shown]
    assert all(f"<name>{n}</name>" in reply.reveal_text for n in names)
    assert reply.reveal_text.count("<skill>") == len(names)
    return names


def test_a_session_is_revealed_each_skill_once_and_the_stable_block_never_moves(
        served: Served) -> None:
    stub = served.stub
    first = turn(stub, PDF, "conv")
    assert revealed(first) == [SKILL_OF[PDF]]
    assert first.reveal_text.startswith("<available_skills>\n  <skill>")
    assert first.reveal_text.endswith("</available_skills>\n")
    assert "<name>skill-5</name>" in first.stable_text  # always-on: stable, never revealed
    assert "may be used" in first.stable_text and "<available_skills>" in first.stable_text
    assert SKILL_OF[PDF] not in first.stable_text and "score" not in first.stable_text
    again = turn(stub, PDF, "conv")
    assert (again.reveal_text, revealed(again)) == ("", [])
    assert [s.name for s in again.skills if s.reason == pb.ROUTE_REASON_RETRIEVED] == [
        SKILL_OF[PDF]]  # still routed: catalog_text is the per-turn block, as before
    assert revealed(turn(stub, GIT, "conv")) == [SKILL_OF[GIT]]
    assert revealed(turn(stub, PDF, "other")) == [SKILL_OF[PDF]]  # another session
    assert revealed(turn(stub, PDF)) == revealed(turn(stub, PDF)) == [SKILL_OF[PDF]]  # no id
    stables = {turn(stub, m, s).stable_text for m in (PDF, GIT, CSV) for s in ("conv", "x", "")}
    assert stables == {first.stable_text}


def test_explain_shows_what_the_session_was_shown_and_changes_nothing(
        served: Served) -> None:
    stub = served.stub
    turn(stub, PDF, "conv")
    turn(stub, GIT, "conv")
    explained = stub.Explain(pb.RouteRequest(message=CSV, session_id="conv", top_k=1))
    assert [(s.name, s.turn) for s in explained.shown] == [
        (ALWAYS, 1), (SKILL_OF[PDF], 1), (SKILL_OF[GIT], 2)]
    assert [s.name for s in explained.route.skills if s.first_shown] == [SKILL_OF[CSV]]
    assert revealed(turn(stub, CSV, "conv")) == [SKILL_OF[CSV]]  # Explain remembered nothing


def test_revealed_skills_and_context_reset(served: Served) -> None:
    stub = served.stub
    assert revealed(turn(stub, PDF, "a", revealed_skills=[SKILL_OF[PDF]])) == []
    assert revealed(turn(stub, PDF, "a", context_reset=True)) == [SKILL_OF[PDF]]
    turn(stub, GIT, "a")
    replaced = turn(stub, PDF, "a", context_reset=True, revealed_skills=[SKILL_OF[GIT]])
    assert revealed(replaced) == [SKILL_OF[PDF]]
    assert revealed(turn(stub, GIT, "a")) == []  # the gateway said the model still sees it
    with pytest.raises(grpc.RpcError) as caught:
        turn(stub, PDF, "a", revealed_skills=[f"s-{i}" for i in range(257)])
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "revealed_skills" in str(caught.value.details())


def test_every_catalog_format(served: Served) -> None:
    stub = served.stub
    xml = turn(stub, DOCKER, "xml")
    as_json = turn(stub, DOCKER, "json", format=pb.CATALOG_FORMAT_JSON)
    assert [e["name"] for e in json.loads(as_json.reveal_text)["available_skills"]] == [
        SKILL_OF[DOCKER]]
    assert '{"available_skills": [...]} objects' in as_json.stable_text
    assert json.loads(as_json.stable_text.split("\n\n", 1)[1])["available_skills"][0][
        "name"] == ALWAYS
    markdown = turn(stub, DOCKER, "md", format=pb.CATALOG_FORMAT_MARKDOWN)
    assert markdown.reveal_text.startswith("## Available skills\n\n- **skill-3**: ")
    assert "- **skill-5**:" in markdown.stable_text
    assert len({xml.stable_text, as_json.stable_text, markdown.stable_text}) == 3
    for tools in (pb.CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES,
                  pb.CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT):
        reply = turn(stub, DOCKER, f"t{tools}", format=tools)
        assert (reply.stable_text, reply.reveal_text) == ("", "")
        assert not any(s.first_shown for s in reply.skills)


def test_an_empty_catalog_has_no_block(empty_stub: pb_grpc.SkillRouterStub) -> None:
    reply = turn(empty_stub, PDF, "conv")
    assert (reply.catalog_text, reply.stable_text, reply.reveal_text) == ("", "", "")


def test_the_stable_block_survives_a_reindex_that_keeps_the_always_on_set(
        served: Served, index: Path) -> None:
    stub = served.stub
    before = turn(stub, PDF, "conv")
    add_skill(index.parent / "skills", "skill-new", "Handles weather forecasts and rain.")
    assert stub.Reindex(pb.ReindexRequest()).swapped
    after = turn(stub, "weather forecasts and rain", "conv")
    assert after.index_version != before.index_version
    assert after.stable_text == before.stable_text
    assert revealed(after) == ["skill-new"]
    assert revealed(turn(stub, PDF, "conv")) == []  # the session's memory outlives a Reindex


def call(method: Callable[..., Any], token: str, request: Any) -> Any:
    return method(request, metadata=(("authorization", f"Bearer {token}"),))


def test_a_sessions_memory_is_its_owners(index: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("owner\nstranger\n")
    with serving(engine(index), auth_token_file=str(tokens)) as running:
        stub = running.stub
        mine = call(stub.Route, "owner", pb.RouteRequest(message=PDF, session_id="c", top_k=1))
        assert revealed(mine) == [SKILL_OF[PDF]]
        for method in (stub.Route, stub.Explain):
            with pytest.raises(grpc.RpcError) as caught:
                call(method, "stranger", pb.RouteRequest(message=PDF, session_id="c",
                                                         context_reset=True))
            assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
        again = call(stub.Route, "owner", pb.RouteRequest(message=PDF, session_id="c", top_k=1))
        assert revealed(again) == []  # the stranger's reset changed nothing


def test_an_activation_of_a_skill_revealed_turns_ago_teaches(
        served: Served, index: Path) -> None:
    stub = served.stub
    turn(stub, PDF, "conv")
    for message in (GIT, CSV, DOCKER, GIT):  # past the window of the last three Routes
        turn(stub, message, "conv")
    stub.Activate(pb.ActivateRequest(name=SKILL_OF[PDF], session_id="conv"))
    assert ("conv", GIT, SKILL_OF[PDF]) in positives(index)
    stub.Activate(pb.ActivateRequest(name=SKILL_OF[CSV], session_id="other"))  # never shown
    assert not any(p[0] == "other" for p in positives(index))


def test_the_fleets_replicas_share_the_memory(index: Path, tmp_path: Path,
                                               postgres_dsn: str) -> None:  # noqa: F811
    with ExitStack() as stack:
        engines = [engine(index, store_url=postgres_dsn, spool_dir=str(tmp_path / f"spool{i}"))
                   for i in range(2)]
        for opened in engines:
            stack.callback(opened.close)
        one, two = (stack.enter_context(serving(opened)) for opened in engines)

        def shown(stub: pb_grpc.SkillRouterStub) -> list[tuple[str, int]]:
            explained = stub.Explain(pb.RouteRequest(message=PDF, session_id="fleet"))
            return [(s.name, s.turn) for s in explained.shown]

        def seen_by(stub: pb_grpc.SkillRouterStub, *pairs: tuple[str, int]) -> None:
            eventually(lambda: set(pairs) <= set(shown(stub)))  # the other replica's write

        assert revealed(turn(one.stub, PDF, "fleet")) == [SKILL_OF[PDF]]
        seen_by(two.stub, (SKILL_OF[PDF], 1))
        assert revealed(turn(two.stub, PDF, "fleet")) == []
        assert revealed(turn(two.stub, GIT, "fleet")) == [SKILL_OF[GIT]]
        seen_by(one.stub, (SKILL_OF[GIT], 3))
        assert revealed(turn(one.stub, GIT, "fleet")) == []
        reset = turn(one.stub, PDF, "fleet", context_reset=True)
        assert revealed(reset) == [SKILL_OF[PDF]]
        seen_by(two.stub, (SKILL_OF[PDF], 5))
        assert revealed(turn(two.stub, GIT, "fleet")) == [SKILL_OF[GIT]]
        seen_by(one.stub, (SKILL_OF[GIT], 6))
        assert shown(two.stub) == [(ALWAYS, 5), (SKILL_OF[PDF], 5), (SKILL_OF[GIT], 6)]
