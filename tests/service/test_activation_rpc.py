"""Activate, ReadResource, ValidateArguments and Route's activation fields over a real server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from router.activation.content import is_skill_content
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.race import race
from tests.support.skills import SECRET, Tree

Stub = pb_grpc.SkillRouterStub
PDF_MESSAGE = "extract the tables from this PDF file"


def rpc_error(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


def activate(stub: Stub, name: str = "pdf-tools", **fields: Any) -> pb.ActivateResponse:
    response: pb.ActivateResponse = stub.Activate(pb.ActivateRequest(name=name, **fields))
    return response


def read(stub: Stub, name: str, path: str) -> pb.ReadResourceResponse:
    response: pb.ReadResourceResponse = stub.ReadResource(
        pb.ReadResourceRequest(name=name, path=path))
    return response


def validate(stub: Stub, arguments: object) -> pb.ValidateArgumentsResponse:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    response: pb.ValidateArgumentsResponse = stub.ValidateArguments(
        pb.ValidateArgumentsRequest(name="book-meeting", arguments_json=text))
    return response


# --- Activate ------------------------------------------------------------------------------


def test_activate_wraps_body_and_lists_resources(tree_stub: Stub, tree: Tree) -> None:
    response = activate(tree_stub)
    skill_dir = str(tree.root / "pdf-tools")
    assert response.content.startswith('<skill_content name="pdf-tools">\n# PDF tools')
    assert is_skill_content(response.content)
    assert "---" not in response.content.split("\n", 2)[1]  # body only, no front matter
    assert f"Skill directory: {skill_dir}" in response.content
    assert "Relative paths in this skill are relative to the skill directory." in response.content
    assert ("<skill_resources>\n  <file>references/guide.md</file>\n"
            "  <file>scripts/extract.py</file>\n</skill_resources>") in response.content
    assert list(response.resources) == ["references/guide.md", "scripts/extract.py"]
    assert not response.resources_truncated
    assert response.skill_dir == skill_dir
    assert not response.already_active


def test_activate_with_frontmatter(tree_stub: Stub) -> None:
    content = activate(tree_stub, include_frontmatter=True).content
    assert content.startswith('<skill_content name="pdf-tools">\n---\nname: pdf-tools\n')


def test_activate_manifest_skill_shows_its_schema(tree_stub: Stub) -> None:
    content = activate(tree_stub, "book-meeting").content
    assert is_skill_content(content)
    assert '"format": "date"' in content and "tool named `book-meeting`" in content


def test_unknown_name_is_not_found_with_close_names(tree_stub: Stub) -> None:
    err = rpc_error(lambda: activate(tree_stub, "pdf-tool"))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert "pdf-tools" in (err.details() or "")


@pytest.mark.parametrize("name", ["user-only", "switched-off"])
def test_activate_refused(tree_stub: Stub, name: str) -> None:
    err = rpc_error(lambda: activate(tree_stub, name))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert name in (err.details() or "")


def test_empty_name_is_invalid(tree_stub: Stub) -> None:
    assert rpc_error(lambda: activate(tree_stub, "")).code() == grpc.StatusCode.INVALID_ARGUMENT


# --- de-duplication ---------------------------------------------------------------------------


def test_second_activate_in_session_is_already_active(tree_stub: Stub) -> None:
    first = activate(tree_stub, session_id="dedup-1")
    second = activate(tree_stub, session_id="dedup-1")
    assert first.content and not first.already_active
    assert second.already_active and second.content == ""
    assert list(second.resources) == list(first.resources)
    assert activate(tree_stub, session_id="dedup-other").content  # another conversation


def test_active_skills_counts_as_already_active(tree_stub: Stub) -> None:
    response = activate(tree_stub, active_skills=["pdf-tools"])
    assert response.already_active and response.content == ""


def test_route_explicit_then_activate_is_deduplicated(tree_stub: Stub) -> None:
    route = tree_stub.Route(pb.RouteRequest(message="/pdf-tools merge these",
                                            session_id="explicit-1"))
    assert route.skills[0].name == "pdf-tools"
    assert route.skills[0].reason == pb.ROUTE_REASON_EXPLICIT
    assert route.explicit_content.startswith('<skill_content name="pdf-tools">')
    assert is_skill_content(route.explicit_content)
    assert activate(tree_stub, session_id="explicit-1").already_active
    again = tree_stub.Route(pb.RouteRequest(message="/pdf-tools once more",
                                            session_id="explicit-1"))
    assert again.explicit_content == ""


def test_route_explicit_needs_user_invocable_skill(tree_stub: Stub) -> None:
    route = tree_stub.Route(pb.RouteRequest(message="/model-only format the numbers",
                                            session_id="explicit-2"))
    assert route.explicit_content == ""
    assert all(s.reason != pb.ROUTE_REASON_EXPLICIT for s in route.skills)


def test_concurrent_activate_returns_content_once(tree_stub: Stub) -> None:
    results = race(20, lambda: activate(tree_stub, session_id="concurrent-1"))
    assert len(results) == 20
    full = [r for r in results if r.content]
    assert len(full) == 1 and not full[0].already_active
    assert sum(r.already_active for r in results) == 19


# --- Route fields -----------------------------------------------------------------------------


def test_activate_tool_json_enumerates_routed_names(tree_stub: Stub) -> None:
    route = tree_stub.Route(pb.RouteRequest(message=PDF_MESSAGE))
    tool = json.loads(route.activate_tool_json)
    assert tool["name"] == "activate_skill"
    assert tool["parameters"]["properties"]["name"]["enum"] == [s.name for s in route.skills]
    assert "<available_skills>" in tool["description"]


def test_activate_tool_json_empty_when_nothing_routed(empty_stub: Stub) -> None:
    route = empty_stub.Route(pb.RouteRequest(message=PDF_MESSAGE))
    assert not route.skills and route.activate_tool_json == ""


def test_parameters_json_for_manifest_skill(tree_stub: Stub) -> None:
    route = tree_stub.Route(pb.RouteRequest(
        message="book a meeting room for a date and attendees"))
    by_name = {s.name: s for s in route.skills}
    assert json.loads(by_name["book-meeting"].parameters_json)["required"] == [
        "date", "attendees"]
    assert all(s.parameters_json == "" for s in route.skills if s.name != "book-meeting")


# --- ReadResource -----------------------------------------------------------------------------


def test_read_resource(tree_stub: Stub) -> None:
    response = read(tree_stub, "pdf-tools", "scripts/extract.py")
    assert response.content == b"print('tables')\n"
    assert response.size == len(response.content)
    assert response.media_type == "text/x-python"


TRAVERSALS = ["../x", "a/../../x", "/etc/passwd", "..\\x", "%2e%2e/x", "%252e%252e/x",
              "scripts/extract.py\x00", "../../secret.txt", "%2e%2e/%2e%2e/secret.txt"]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_in_path_returns_no_file(tree_stub: Stub, tree: Tree, path: str) -> None:
    candidates = {path, path.replace("x", "secret.txt")}
    if path.startswith("/"):
        candidates.add(str(tree.secret))
    for candidate in candidates:
        err = rpc_error(lambda: read(tree_stub, "pdf-tools", candidate))  # noqa: B023
        assert err.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
        assert SECRET not in (err.details() or "")


@pytest.mark.parametrize("name", [*TRAVERSALS, "pdf-tools/..", "pdf-tools\x00"])
def test_traversal_in_name_returns_no_file(tree_stub: Stub, name: str) -> None:
    for path in ("scripts/extract.py", "secret.txt", "SKILL.md"):
        err = rpc_error(lambda: read(tree_stub, name, path))  # noqa: B023
        assert err.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
    err = rpc_error(lambda: activate(tree_stub, name))
    assert err.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)


@pytest.mark.parametrize("path", ["leak.txt", "linked/notes.md"])
def test_symlink_out_of_skill_dir_is_not_served(tree_stub: Stub, path: str) -> None:
    err = rpc_error(lambda: read(tree_stub, "escape-links", path))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    listed = activate(tree_stub, "escape-links").resources
    assert path not in listed


def test_missing_resource_is_not_found(tree_stub: Stub) -> None:
    err = rpc_error(lambda: read(tree_stub, "pdf-tools", "scripts/missing.py"))
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_resource_over_size_cap_is_resource_exhausted(tree_stub: Stub) -> None:
    err = rpc_error(lambda: read(tree_stub, "big-data", "data.bin"))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


# --- ValidateArguments ------------------------------------------------------------------------


def test_valid_arguments_are_normalised(tree_stub: Stub) -> None:
    response = validate(tree_stub, {"date": "2025-03-28", "attendees": 4, "room": "small"})
    assert response.valid and not response.errors
    assert json.loads(response.arguments_json) == {"date": "2025-03-28", "attendees": 4,
                                                   "room": "small", "minutes": 30}


@pytest.mark.parametrize(("arguments", "field", "expected", "got"), [
    ({"date": "2025-03-28", "attendees": "four"}, "attendees", "an integer", '"four"'),
    ({"date": "2025-03-28"}, "attendees", "an integer", "missing"),
    ({"date": "2025-03-28", "attendees": 2, "room": "huge"}, "room",
     'one of "small", "large"', '"huge"'),
    ({"date": "28/03/2025", "attendees": 2}, "date", "a date in YYYY-MM-DD form",
     '"28/03/2025"'),
], ids=["wrong_type", "missing_required", "enum", "format"])
def test_invalid_arguments_are_explained(tree_stub: Stub, arguments: dict[str, Any],
                                         field: str, expected: str, got: str) -> None:
    response = validate(tree_stub, arguments)
    assert not response.valid and response.arguments_json == ""
    [error] = list(response.errors)
    assert (error.field, error.expected, error.got) == (field, expected, got)
    assert error.problem.startswith(field)


def test_malformed_arguments_json_is_invalid_argument(tree_stub: Stub) -> None:
    err = rpc_error(lambda: validate(tree_stub, "{not json"))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_validate_arguments_of_skill_md_skill_is_invalid(tree_stub: Stub) -> None:
    err = rpc_error(lambda: tree_stub.ValidateArguments(
        pb.ValidateArgumentsRequest(name="pdf-tools", arguments_json="{}")))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

