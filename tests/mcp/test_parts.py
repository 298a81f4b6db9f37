"""The door's pure parts: skill:// URIs, per-session state, answers to unreadable lines."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from router.door.context import NO_SESSION
from router.errors import InvalidRequest
from router.mcp.resources import parse_uri, resource_uri
from router.mcp.sessions import DoorSessions
from router.mcp.stdio import error_for


@pytest.mark.parametrize("path", ["SKILL.md", "scripts/extract.py", "docs/a b.md",
                                  "odd/100%.txt", "data/%2e%2e.txt"])
def test_a_uri_names_exactly_the_listed_path(path: str) -> None:
    uri = resource_uri("pdf-tools", path)
    assert uri.startswith("skill://pdf-tools/")
    assert parse_uri(uri) == ("pdf-tools", path)


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "skill://pdf-tools", "skill://pdf-tools/",
                                 "skill:///SKILL.md", "https://example.com/skill://x/y"])
def test_a_uri_that_names_no_skill_file_is_refused(uri: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_uri(uri)


def test_sessions_get_their_own_generated_id_and_remember_activations() -> None:
    sessions = DoorSessions()
    first, other = sessions.state("host-session-a"), sessions.state("host-session-b")
    assert first.session_id.startswith("mcp-") and first.session_id != other.session_id
    assert "host-session-a" not in first.session_id  # the host's session id is never passed on
    # (host ids hold letters outside hex, so a generated id cannot contain one by chance)
    sessions.mark_active(first, "pdf-tools")
    assert sessions.state("host-session-a").active_skills == ("pdf-tools",)
    assert sessions.state("host-session-a").session_id == first.session_id
    assert sessions.state("host-session-b").active_skills == ()
    assert sessions.state("") is NO_SESSION
    sessions.routed("mcp-a", "route-1")
    assert sessions.state("mcp-a").route_id == "route-1"  # passed back on the next Activate
    assert sessions.state("mcp-b").route_id == ""


def test_session_memory_is_bounded() -> None:
    sessions = DoorSessions(max_sessions=2)
    oldest = sessions.state("one")
    sessions.mark_active(oldest, "git-helper")
    sessions.state("two")
    sessions.state("three")  # evicts "one", the least recently used
    again = sessions.state("one")
    assert again.session_id != oldest.session_id and again.active_skills == ()


def _validation_error(line: str) -> ValidationError:
    try:
        TypeAdapter(dict[str, int]).validate_json(line)
    except ValidationError as exc:
        return exc
    raise AssertionError("expected a validation error")


def test_an_unreadable_line_is_answered_with_the_json_rpc_code() -> None:
    not_json = json.loads(error_for(_validation_error("{oops")).model_dump_json())
    not_a_message = json.loads(error_for(_validation_error('{"a": "b"}')).model_dump_json())
    assert not_json["id"] is None and not_json["error"]["code"] == -32700
    assert not_a_message["id"] is None and not_a_message["error"]["code"] == -32600
