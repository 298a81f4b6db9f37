"""Session ids and route ids belong to the principal that created them (a real server on port 0
with two accepted tokens, each its own principal): another principal's Route, Activate and
Feedback on them are PERMISSION_DENIED and write nothing; Feedback naming neither a route nor a
session moves no counter; ListExamples shows no session ids."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.learning.file_store import FileStore
from router.v1 import router_pb2 as pb
from tests.support.learning import PDF, make_index, open_engine, positives
from tests.support.servers import Served, serving

OWNER, STRANGER = "owner-token", "stranger-token"


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    return make_index(tmp_path)


@pytest.fixture()
def served(index: Path, tmp_path: Path) -> Iterator[Served]:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{OWNER}\n{STRANGER}\n")
    with serving(open_engine(index), auth_token_file=str(tokens)) as running:
        yield running


def call(method: Callable[..., Any], token: str, request: Any) -> Any:
    return method(request, metadata=(("authorization", f"Bearer {token}"),))


def denied(method: Callable[..., Any], token: str, request: Any) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        call(method, token, request)
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
    return str(caught.value.details())


def test_another_principals_route_id_is_refused_and_writes_nothing(
        served: Served, index: Path) -> None:
    stub = served.stub
    turn = call(stub.Route, OWNER, pb.RouteRequest(message=PDF, session_id="conv-a", top_k=1))
    rows = len(FileStore(index).read_rows())
    assert "belongs to another caller" in denied(
        stub.Activate, STRANGER, pb.ActivateRequest(name="skill-0", route_id=turn.route_id))
    denied(stub.Feedback, STRANGER, pb.FeedbackRequest(
        skill="skill-0", route_id=turn.route_id, outcome=pb.FEEDBACK_OUTCOME_WRONG_SKILL))
    assert len(FileStore(index).read_rows()) == rows  # nothing written
    mine = call(stub.Activate, OWNER, pb.ActivateRequest(name="skill-0", session_id="conv-a",
                                                         route_id=turn.route_id))
    assert mine.content and not mine.already_active
    assert positives(index) == {("conv-a", PDF, "skill-0")}  # no stranger's negative


def test_another_principals_session_id_is_refused(served: Served, index: Path) -> None:
    stub = served.stub
    call(stub.Route, OWNER, pb.RouteRequest(message=PDF, session_id="conv-a", top_k=1))
    denied(stub.Activate, STRANGER, pb.ActivateRequest(name="skill-0", session_id="conv-a"))
    denied(stub.Route, STRANGER, pb.RouteRequest(message="/skill-0 now", session_id="conv-a"))
    denied(stub.Feedback, STRANGER, pb.FeedbackRequest(
        skill="skill-0", session_id="conv-a", outcome=pb.FEEDBACK_OUTCOME_SUCCESS))
    mine = call(stub.Activate, OWNER, pb.ActivateRequest(name="skill-0", session_id="conv-a"))
    assert mine.content and not mine.already_active  # the stranger marked nothing active
    theirs = call(stub.Activate, STRANGER, pb.ActivateRequest(name="skill-0",
                                                              session_id="conv-b"))
    assert theirs.content  # its own session is its own
    owner = hashlib.sha256(OWNER.encode()).hexdigest()  # a principal: never the token itself
    assert {r.principal for r in FileStore(index).read_rows() if r.session == "conv-a"} == {owner}
    assert not any(OWNER in line for line in _store_text(index))


def _store_text(index: Path) -> list[str]:
    return [line for path in (index / "feedback").iterdir() if path.is_file()
            for line in path.read_text().splitlines()]


def test_feedback_with_no_route_and_no_session_moves_no_counter(served: Served) -> None:
    stub = served.stub
    turn = call(stub.Route, OWNER, pb.RouteRequest(message=PDF, session_id="conv-a", top_k=1))
    call(stub.Activate, OWNER, pb.ActivateRequest(name="skill-0", session_id="conv-a",
                                                  route_id=turn.route_id))
    before = call(stub.SkillStats, OWNER, pb.SkillStatsRequest())
    replies = [call(stub.Feedback, STRANGER, pb.FeedbackRequest(
        skill="skill-0", outcome=pb.FEEDBACK_OUTCOME_SUCCESS)) for _ in range(30)]
    after = call(stub.SkillStats, OWNER, pb.SkillStatsRequest())
    assert not any(r.recorded for r in replies)
    assert list(after.skills) == list(before.skills)


def test_list_examples_shows_no_session_ids(served: Served) -> None:
    stub = served.stub
    for session in ("conv-a", "conv-b"):
        turn = call(stub.Route, OWNER, pb.RouteRequest(message=PDF, session_id=session, top_k=1))
        call(stub.Activate, OWNER, pb.ActivateRequest(name="skill-0", session_id=session,
                                                      route_id=turn.route_id))
    listed = call(stub.ListExamples, OWNER, pb.ListExamplesRequest())
    assert listed.total == 2 and all(e.query == PDF for e in listed.examples)
    assert [e.session_id for e in listed.examples] == ["", ""]
