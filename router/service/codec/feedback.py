"""Protobuf conversions for Feedback: the outcome enum <-> the store's outcome names."""

from __future__ import annotations

from router.errors import InvalidRequest
from router.v1 import router_pb2 as pb

OUTCOMES: dict[int, str] = {
    pb.FEEDBACK_OUTCOME_SUCCESS: "success",
    pb.FEEDBACK_OUTCOME_FAILURE: "failure",
    pb.FEEDBACK_OUTCOME_WRONG_SKILL: "wrong_skill",
    pb.FEEDBACK_OUTCOME_NOT_USED: "not_used",
}


def outcome_from_proto(outcome: int) -> str:
    """The outcome name; an unspecified or unknown number is InvalidRequest."""
    name = OUTCOMES.get(outcome)
    if name is None:
        known = ", ".join(pb.FeedbackOutcome.Name(n) for n in sorted(OUTCOMES))
        raise InvalidRequest(f"outcome {outcome} is not a feedback outcome; use one of {known}")
    return name
