"""An activation whose Route reached the store after it is completed when traffic is read
(``router.learning.joins``): in the learned examples, the reviewed ones and a compaction."""

from __future__ import annotations

from dataclasses import replace

from router.config import FeedbackConfig
from router.learning.joins import complete
from router.learning.policy import select_examples
from router.learning.rows import ACTIVATE, FEEDBACK, ROUTE, Row
from router.learning.stats import compact_rows

POLICY = FeedbackConfig(min_sessions=1)
NOW = 1_800_000_000.0


def routed(route_id: str, session: str = "s1", principal: str = "alice",
           forced: bool = False) -> Row:
    return Row(kind=ROUTE, ts=NOW - 5, session=session, route_id=route_id,
               query=f"request of {route_id}", shown=("pdf", "csv", "always"),
               retrieved=("pdf", "csv"), principal=principal, forced=forced)


def activated(route_id: str, skill: str = "pdf", session: str = "",
              principal: str = "alice") -> Row:
    """As a replica that could not find the Route records it: the id, no request."""
    return Row(kind=ACTIVATE, ts=NOW, skill=skill, session=session, route_id=route_id,
               principal=principal)


def test_an_activation_recorded_before_its_route_arrived_teaches_its_request() -> None:
    rows = [activated("r1"), routed("r1")]  # the Route's row came later
    completed = complete(rows)[0]
    assert (completed.query, completed.session, completed.shown) == (
        "request of r1", "s1", ("pdf", "csv"))
    examples = select_examples(rows, POLICY, NOW)
    assert [(e.query, e.skills) for e in examples] == [("request of r1", ("pdf",))]
    assert select_examples(rows[:1], POLICY, NOW) == []  # without the Route: nothing to learn


def test_the_recorders_rules_hold_at_the_join() -> None:
    route = routed("r1")
    for other in (activated("r1", principal="mallory"),  # another principal's route id
                  activated("r1", skill="deploy"),  # a skill the Route did not retrieve
                  activated("r1", session="s2")):  # another conversation
        assert complete([other, route])[0] == other
    forced = routed("r2", forced=True)  # the user named the skill: the model chose nothing
    assert complete([activated("r2"), forced])[0].query == ""
    outcome = Row(kind=FEEDBACK, ts=NOW, skill="csv", outcome="wrong_skill", route_id="r1",
                  principal="alice")
    negative = complete([outcome, route])[0]
    assert (negative.query, negative.shown) == ("request of r1", ())
    success = replace(outcome, outcome="success")
    assert complete([success, route])[0] == success  # an outcome teaches nothing


def test_a_compaction_keeps_the_completed_activation_as_an_example() -> None:
    kept = compact_rows([activated("r1"), routed("r1")], POLICY, NOW)
    examples = [r for r in kept if r.kind == ACTIVATE]
    assert [(r.query, r.skill) for r in examples] == [("request of r1", "pdf")]
    assert select_examples(kept, POLICY, NOW)[0].query == "request of r1"
