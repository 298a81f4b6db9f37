"""The one error table between ``router.errors`` and each door's status: gRPC codes read both
ways, the console's HTTP statuses, the MCP door's JSON-RPC codes, the JSON door's Connect
codes."""

from __future__ import annotations

import grpc
import mcp_types
import pytest

from router.access.model import ANONYMOUS
from router.access.roles import RoleMissing
from router.door import api
from router.door.api import (
    ERROR_TABLE,
    Call,
    code_name_of_http,
    described,
    error_for,
    http_status,
    mcp_code,
    received,
    status_for,
)
from router.errors import (
    DeadlineExceeded,
    FailedPrecondition,
    IndexCorrupt,
    IndexUnavailable,
    Internal,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    RouterError,
    ServiceError,
    SkillParseError,
    StaleFile,
    TooLarge,
    Unauthenticated,
    Unavailable,
)

# A code's class: the subclasses listed before their parent (RateLimited, IndexUnavailable) are
# never answered with as such.
STATUS_BY_ERROR = [(error, status.grpc) for error, status in ERROR_TABLE
                   if error not in (RateLimited, IndexUnavailable)]


@pytest.mark.parametrize(("error", "code"), STATUS_BY_ERROR, ids=lambda v: getattr(v, "name",
                                                                                  repr(v)))
def test_each_code_comes_back_as_the_class_that_is_answered_with_it(
        error: type[RouterError], code: grpc.StatusCode) -> None:
    raised = error_for(code, "the server's words")
    assert type(raised) is error
    assert (raised.code, raised.details, str(raised)) == (code, "the server's words",
                                                          "the server's words")
    if error is not Internal:  # raised in-process, its message stays in the server log
        assert status_for(error("why")) == (code, "why")


def test_each_code_names_one_class() -> None:
    codes = [code for _error, code in STATUS_BY_ERROR]
    assert len(codes) == len(set(codes))


def test_subclasses_follow_their_parent_and_the_unnamed_are_internal() -> None:
    assert status_for(IndexUnavailable("no index"))[0] is grpc.StatusCode.UNAVAILABLE
    assert status_for(IndexCorrupt("bad checksum"))[0] is grpc.StatusCode.UNAVAILABLE
    for hidden in (RouterError("unclassified"), Internal("a secret path"), KeyError("x")):
        code, message = status_for(hidden)
        assert code is grpc.StatusCode.INTERNAL and "see the server log" in message
        assert "secret" not in message


def test_a_code_without_a_class_is_a_service_error_that_keeps_it() -> None:
    raised = error_for(grpc.StatusCode.UNIMPLEMENTED, "")
    assert type(raised) is ServiceError and not isinstance(raised, Unavailable)
    assert raised.code is grpc.StatusCode.UNIMPLEMENTED and str(raised) == "unimplemented"
    assert described(raised) == "UNIMPLEMENTED: "


class _Answered(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    """What a failed call raises: an RpcError that is also the call."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.NOT_FOUND

    def details(self) -> str:
        return "no skill 'x'"


def test_a_failed_call_becomes_its_error() -> None:
    found = received(_Answered())
    assert isinstance(found, NotFound) and described(found) == "NOT_FOUND: no skill 'x'"
    bare = received(grpc.RpcError("no status"))
    assert type(bare) is ServiceError and bare.code is grpc.StatusCode.UNKNOWN
    assert described(NotFound("raised here")) == "raised here"


def test_a_code_answered_becomes_the_most_general_class_listed_with_it() -> None:
    assert type(error_for(grpc.StatusCode.RESOURCE_EXHAUSTED, "full")) is TooLarge
    assert type(error_for(grpc.StatusCode.UNAVAILABLE, "down")) is Unavailable
    stale = error_for(grpc.StatusCode.FAILED_PRECONDITION, "the skill changed")
    assert type(stale) is FailedPrecondition
    assert status_for(StaleFile("changed"))[0] is grpc.StatusCode.FAILED_PRECONDITION
    assert status_for(RateLimited("slow down")) == (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                                    "slow down")


def test_the_console_answers_the_routers_refusals_by_the_table() -> None:
    answered = {error: http_status(error_for(code, "x")) for error, code in STATUS_BY_ERROR}
    assert answered == {error: {InvalidRequest: 400, NotFound: 404, TooLarge: 413,
                                FailedPrecondition: 409}.get(error, 502)
                        for error, _code in STATUS_BY_ERROR}
    assert http_status(StaleFile("changed")) == 409  # a FailedPrecondition
    assert http_status(RateLimited("slow down")) == 429
    assert http_status(ServiceError("unknown")) == 502 and http_status(KeyError("x")) == 502
    assert http_status(RoleMissing(ANONYMOUS, ("ops",), "this page"), Call.GATE) == 403
    assert http_status(PermissionDenied("not yours")) == 502  # the router refused the console


def test_the_mcp_door_answers_by_the_table() -> None:
    assert (api.INVALID_REQUEST, api.INVALID_PARAMS, api.INTERNAL_ERROR) == (
        mcp_types.INVALID_REQUEST, mcp_types.INVALID_PARAMS, mcp_types.INTERNAL_ERROR)
    for named in (InvalidRequest("bad uri"), NotFound("no skill"), StaleFile("changed"),
                  SkillParseError("bad front matter"), Unavailable("down")):
        assert mcp_code(named) == mcp_types.INVALID_PARAMS, named
    for trouble in (IndexUnavailable("no index"), IndexCorrupt("bad checksum")):
        assert mcp_code(trouble) == mcp_types.INTERNAL_ERROR
    assert mcp_code(NotFound("x"), Call.LISTING) == mcp_types.INTERNAL_ERROR
    missing = RoleMissing(ANONYMOUS, ("route",), "tools/call")
    assert mcp_code(missing, Call.GATE) == mcp_types.INVALID_REQUEST


@pytest.mark.parametrize(("status", "name"), [
    (200, "OK"), (303, "OK"), (400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"),
    (403, "PERMISSION_DENIED"), (404, "NOT_FOUND"), (413, "RESOURCE_EXHAUSTED"),
    (429, "RESOURCE_EXHAUSTED"), (502, "UNAVAILABLE"), (503, "UNAVAILABLE"), (500, "INTERNAL"),
    (405, "FAILED_PRECONDITION")])
def test_an_http_answer_has_a_grpc_status_name(status: int, name: str) -> None:
    assert code_name_of_http(status) == name


def test_the_json_door_answers_the_connect_code_of_each_grpc_code() -> None:
    answered = {error: (status.connect, status.connect_http) for error, status in ERROR_TABLE}
    assert answered == {
        InvalidRequest: ("invalid_argument", 400), NotFound: ("not_found", 404),
        RateLimited: ("resource_exhausted", 429), TooLarge: ("resource_exhausted", 429),
        PermissionDenied: ("permission_denied", 403),
        FailedPrecondition: ("failed_precondition", 400),
        IndexUnavailable: ("unavailable", 503), Unavailable: ("unavailable", 503),
        Unauthenticated: ("unauthenticated", 401), DeadlineExceeded: ("deadline_exceeded", 504),
        Internal: ("internal", 500)}
    assert (api.OTHER.connect, api.OTHER.connect_http) == ("internal", 500)
    assert api.connect_code(grpc.StatusCode.CANCELLED) == "canceled"  # Connect's spelling
    assert {api.connect_http(code) for code in grpc.StatusCode} - {500} == set(
        api.CONNECT_HTTP.values()) - {500}
