"""Learning from traffic over gRPC: the recording rule, the Feedback RPC, bounds, disabled
mode, poisoning limits, purge and stats (a real server on port 0, the hash embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.cli import main
from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.folder import data_files, feedback_dir
from router.learning.traffic import learned_examples
from router.service.metrics import ServiceMetrics
from router.v1 import router_pb2 as pb
from tests.support.learning import (
    CSV,
    DOCKER,
    GIT,
    PDF,
    SQL,
    activate,
    activations,
    make_index,
    open_engine,
    outcomes,
    positives,
    route,
)
from tests.support.servers import Served, serving


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    return make_index(tmp_path)


@pytest.fixture()
def served(index: Path) -> Iterator[Served]:
    with serving(open_engine(index)) as running:
        yield running


def test_an_activation_of_a_shown_skill_records_the_routes_message(
        served: Served, index: Path) -> None:
    turn = route(served.stub, PDF, "conv-1")
    assert turn.route_id and [s.name for s in turn.skills] == ["skill-0"]
    activate(served.stub, "skill-0", "conv-1", turn.route_id)
    assert positives(index) == {("conv-1", PDF, "skill-0")}


def test_an_activation_of_a_skill_not_shown_records_nothing(served: Served, index: Path) -> None:
    turn = route(served.stub, PDF, "conv-1")
    activate(served.stub, "skill-1", "conv-1", turn.route_id)  # git: never shown
    activate(served.stub, "skill-2", "conv-1")  # no route_id: the in-process window
    activate(served.stub, "skill-0", "conv-2")  # shown, but to another session
    assert positives(index) == set()
    assert sorted(r.skill for r in activations(index)) == ["skill-0", "skill-1", "skill-2"]


def test_the_window_is_the_sessions_last_three_routes_or_the_reveals_before_them(
        served: Served, index: Path) -> None:
    """Within the window the Route that showed the skill teaches it; past the window the
    skill, revealed on an earlier turn, is still in the model's context: the session's latest
    request teaches it."""
    for session, later in (("kept", [GIT, CSV]), ("dropped", [GIT, CSV, DOCKER])):
        first = route(served.stub, PDF, session)
        for message in later:
            route(served.stub, message, session)
        activate(served.stub, "skill-0", session, first.route_id)
        route(served.stub, PDF, session + "-memory")
        for message in later:
            route(served.stub, message, session + "-memory")
        activate(served.stub, "skill-0", session + "-memory")  # no route_id: same rule
    assert positives(index) == {("kept", PDF, "skill-0"), ("kept-memory", PDF, "skill-0"),
                                ("dropped", DOCKER, "skill-0"),
                                ("dropped-memory", DOCKER, "skill-0")}


def test_a_typed_name_is_counted_and_teaches_nothing(served: Served, index: Path) -> None:
    turn = served.stub.Route(pb.RouteRequest(message="/skill-4 list every table",
                                             session_id="conv-1"))
    assert turn.explicit_content and turn.route_id
    assert positives(index) == set()  # the user chose the skill: its text says nothing of it
    assert [(r.skill, r.session) for r in activations(index)] == [("skill-4", "conv-1")]


def test_feedback_is_counted_and_a_wrong_skill_is_a_negative(index: Path) -> None:
    engine = open_engine(index)
    metrics = ServiceMetrics(engine)
    with serving(engine, observer=metrics.observe) as served:
        _feedback_counted(served, index, metrics)


def _feedback_counted(served: Served, index: Path, metrics: ServiceMetrics) -> None:
    turn = route(served.stub, SQL, "conv-1")
    for outcome in (pb.FEEDBACK_OUTCOME_SUCCESS, pb.FEEDBACK_OUTCOME_WRONG_SKILL):
        reply = served.stub.Feedback(pb.FeedbackRequest(session_id="conv-1", skill="skill-4",
                                                        outcome=outcome,
                                                        route_id=turn.route_id))
        assert reply.recorded
    rows = outcomes(index)
    assert [(r.outcome, r.query) for r in rows] == [("success", ""), ("wrong_skill", SQL)]
    registry = metrics.registry
    for name in ("succeeded", "wrong"):
        assert registry.get_sample_value(f"skill_router_skill_{name}_total",
                                         {"catalog": "default", "skill": "skill-4"}) == 1
    assert registry.get_sample_value("skill_router_skill_shown_total",
                                     {"catalog": "default", "skill": "skill-4"}) == 1


def test_feedback_rejects_unknown_skills_and_outcomes(served: Served) -> None:
    with pytest.raises(grpc.RpcError) as unknown:
        served.stub.Feedback(pb.FeedbackRequest(skill="skil-0",
                                                outcome=pb.FEEDBACK_OUTCOME_SUCCESS))
    assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
    assert "skill-0" in str(unknown.value.details())  # a close name is suggested
    for outcome in (pb.FEEDBACK_OUTCOME_UNSPECIFIED, 99):
        with pytest.raises(grpc.RpcError) as bad:
            served.stub.Feedback(pb.FeedbackRequest(
                skill="skill-0", outcome=outcome))  # type: ignore[arg-type]
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "FEEDBACK_OUTCOME_SUCCESS" in str(bad.value.details())


def test_disabled_feedback_stores_nothing(index: Path) -> None:
    with serving(open_engine(index, enabled=False)) as served:
        turn = route(served.stub, PDF, "conv-1")
        activate(served.stub, "skill-0", "conv-1", turn.route_id)
        reply = served.stub.Feedback(pb.FeedbackRequest(skill="skill-0",
                                                        outcome=pb.FEEDBACK_OUTCOME_SUCCESS))
    assert turn.route_id == "" and not reply.recorded
    assert not feedback_dir(index).exists()


def _teach(served: Served, sessions: list[str], messages: list[str]) -> None:
    for session in sessions:
        for message in messages:
            turn = route(served.stub, message, session)
            retrieved = [s.name for s in turn.skills if s.reason == pb.ROUTE_REASON_RETRIEVED]
            activate(served.stub, retrieved[0], session, turn.route_id)


def test_one_session_cannot_teach_alone_and_is_capped(index: Path) -> None:
    policy = FeedbackConfig(min_sessions=2, max_per_session=2)
    with serving(open_engine(index, min_sessions=2, max_per_session=2)) as served:
        _teach(served, ["attacker"], [PDF, GIT, CSV, DOCKER, SQL])
        assert learned_examples(index, policy) == []  # every skill has one session's support
        _teach(served, ["someone-else"], [PDF, GIT, CSV, DOCKER, SQL])
        learned = learned_examples(index, policy)
    # Each session counts with its newest two only: PDF, GIT and CSV lack a second session.
    assert {(e.query, e.skills) for e in learned} == {(DOCKER, ("skill-3",)),
                                                      (SQL, ("skill-4",))}


def test_rows_per_skill_stay_bounded_on_disk(index: Path) -> None:
    policy = FeedbackConfig(max_rows_per_skill=3, min_sessions=1)
    engine = open_engine(index, max_rows_per_skill=3, min_sessions=1)
    with serving(engine) as served:
        for i in range(8):
            _teach(served, [f"s{i}"], [f"{PDF} {i}"])
    engine.recorder.close()  # as when the process ends: its segment can be compacted
    assert FileStore(index, policy).compact()
    assert len(positives(index)) == 3
    assert len(learned_examples(index, policy)) == 3
    assert len(data_files(feedback_dir(index))) == 1


def test_operators_list_and_purge_learned_examples(
        index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serving(open_engine(index)) as served:
        _teach(served, ["a", "b"], [PDF, GIT])
        assert main(["examples", "list", "--index", str(index), "--skill", "skill-0"]) == 0
        listed = capsys.readouterr().out.splitlines()
        assert len(listed) == 2 and all(line.startswith("skill-0\tpositive") for line in listed)
        assert main(["examples", "purge", "--index", str(index), "--skill", "skill-0"]) == 0
        assert "purged 2 examples" in capsys.readouterr().out
        assert {e.skills for e in learned_examples(index, FeedbackConfig())} == {("skill-1",)}
        _teach(served, ["c", "d"], [PDF])  # new traffic is learned again
        assert main(["examples", "purge", "--index", str(index), "--older-than", "0"]) == 0
    assert learned_examples(index, FeedbackConfig()) == []
    assert main(["examples", "purge", "--index", str(index)]) == 2


def test_stats_lists_skills_routed_but_never_activated(
        index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serving(open_engine(index)) as served:
        for i in range(3):
            turn = route(served.stub, GIT, f"s{i}")
            route(served.stub, DOCKER, f"s{i}")
            activate(served.stub, "skill-1", f"s{i}", turn.route_id)
            served.stub.Feedback(pb.FeedbackRequest(session_id=f"s{i}", skill="skill-1",
                                                    outcome=pb.FEEDBACK_OUTCOME_SUCCESS))
    assert main(["stats", "--index", str(index), "--min-routed", "3", "--json"]) == 0
    import json

    shown = json.loads(capsys.readouterr().out)
    by_skill = {s["skill"]: s for s in shown["skills"]}
    assert (by_skill["skill-1"]["routed"], by_skill["skill-1"]["activated"],
            by_skill["skill-1"]["succeeded"]) == (3, 3, 3)
    assert shown["never_activated"] == ["skill-3"]
    assert main(["stats", "--index", str(index), "--min-routed", "3"]) == 0
    assert "skill-3 (routed 3)" in capsys.readouterr().out


def test_listed_examples_escape_control_characters(
        index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = PDF + " \x1b]0;owned\x07\nforged\tline"  # an OSC sequence, a newline, a tab
    with serving(open_engine(index)) as served:
        turn = route(served.stub, hostile, "s\x1b[2Jx")
        activate(served.stub, "skill-0", "s\x1b[2Jx", turn.route_id)
    assert main(["examples", "list", "--index", str(index)]) == 0
    listed = capsys.readouterr().out
    assert "\x1b" not in listed and "\x07" not in listed
    assert len(listed.splitlines()) == 1 and listed.count("\t") == 4
