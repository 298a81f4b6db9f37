"""The ownership rules as the Engine applies them: ``validate`` only checks (it claims
nothing), ``route`` claims the session, after the request's own checks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from router.access.model import Principal
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.errors import InvalidRequest, PermissionDenied
from router.routing.model import RouteQuery
from router.skills.limits import SESSION_ID_CHARS
from tests.support.skills import skill_record
from tests.support.snapshots import snapshot_of

SKILLS = [skill_record("pdf-tools", "Extracts text and tables from PDF files."),
          skill_record("git-helper", "Writes git commit messages.")]


def engine(index_dir: Path | None = None) -> Engine:
    return Engine(snapshot_of(SKILLS), Config(), HashEmbedder(), index_dir=index_dir)


def turn(principal: str, session: str = "conv-a") -> RouteQuery:
    return RouteQuery(message="extract a pdf table", session_id=session,
                      caller=Principal(principal))


@pytest.mark.parametrize("stored", [False, True])
def test_validate_claims_nothing_and_route_claims_the_session(tmp_path: Path,
                                                              stored: bool) -> None:
    served = engine(tmp_path if stored else None)
    served.validate(turn("bob"))
    served.validate(turn("alice"))  # bob's validate did not make the session his
    assert served.route(turn("alice")).skills
    with pytest.raises(PermissionDenied, match="session_id belongs to another caller"):
        served.route(turn("bob"))
    with pytest.raises(PermissionDenied):
        served.explain(turn("bob"))
    served.validate(turn("bob"))  # still only a check
    assert served.route(turn("bob", session="conv-b")).skills
    served.close()


def test_a_request_is_checked_before_its_session_is_claimed() -> None:
    served = engine()
    served.route(turn("alice"))
    with pytest.raises(InvalidRequest, match="session_id has"):
        served.route(turn("bob", session="s" * (SESSION_ID_CHARS + 1)))
    with pytest.raises(InvalidRequest, match="active_skills lists"):
        served.route(replace(turn("bob"), active_skills=tuple(f"s{i}" for i in range(300))))
    with pytest.raises(InvalidRequest, match="message"):  # the message's check comes first
        served.route(replace(turn("bob", session="s" * (SESSION_ID_CHARS + 1)), message=""))
