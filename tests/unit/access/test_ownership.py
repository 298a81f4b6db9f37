"""The ownership rules (``router.access.ownership``): the session-field caps, who owns a
session id and a route_id, and the in-memory table a store keeps."""

from __future__ import annotations

import pytest

from router.access.ownership import (
    Owners,
    check_route_owner,
    check_session_fields,
    check_session_owner,
)
from router.errors import InvalidRequest, PermissionDenied
from router.skills.limits import ACTIVE_SKILLS, SESSION_ID_CHARS


def test_session_fields_have_caps() -> None:
    check_session_fields("s" * SESSION_ID_CHARS, ["a"] * ACTIVE_SKILLS)
    with pytest.raises(InvalidRequest, match="session_id has 257 characters"):
        check_session_fields("s" * (SESSION_ID_CHARS + 1), ())
    with pytest.raises(InvalidRequest, match="active_skills lists 257 names"):
        check_session_fields("", ["a"] * (ACTIVE_SKILLS + 1))


def test_a_route_id_is_its_routers() -> None:
    check_route_owner(None, "bob")  # unknown: teaches nothing, refused nowhere
    check_route_owner("bob", "bob")
    with pytest.raises(PermissionDenied, match="route_id belongs to another caller"):
        check_route_owner("alice", "bob")
    with pytest.raises(PermissionDenied):
        check_route_owner("", "bob")  # the anonymous principal's is not bob's


def test_a_session_is_its_owners() -> None:
    check_session_owner("bob", "bob")
    with pytest.raises(PermissionDenied, match="session_id belongs to another caller"):
        check_session_owner("alice", "bob")


def test_the_first_claimant_owns_a_session() -> None:
    owners = Owners()
    assert owners.claim("s", "alice") == "alice"
    assert owners.claim("s", "bob") == "alice"
    assert owners.claim("t", "bob") == "bob"
    assert owners.claim("", "bob") == "bob" and owners.claim("", "alice") == "alice"


def test_a_session_known_elsewhere_keeps_its_owner() -> None:
    asked: list[str] = []

    def known(session: str) -> str | None:
        asked.append(session)
        return "alice" if session == "routed" else None

    owners = Owners(known)
    assert owners.claim("routed", "bob") == "alice"
    assert owners.claim("fresh", "bob") == "bob"
    assert owners.claim("routed", "bob") == "alice"
    assert asked == ["routed", "fresh"]  # asked once, then remembered
    assert owners.claim("", "bob") == "bob" and asked == ["routed", "fresh"]


def test_the_least_recently_used_session_is_forgotten_first() -> None:
    owners = Owners(max_sessions=2)
    owners.claim("a", "alice")
    owners.claim("b", "alice")
    owners.claim("a", "bob")  # touches a
    owners.claim("c", "alice")  # forgets b
    assert owners.claim("b", "bob") == "bob"
    assert owners.claim("a", "bob") == "bob"  # a went when b came back
