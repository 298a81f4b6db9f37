"""The one table between ``router.errors`` and gRPC status codes, read both ways."""

from __future__ import annotations

import grpc
import pytest

from router.door.api import STATUS_BY_ERROR, described, error_for, received, status_for
from router.errors import (
    IndexCorrupt,
    IndexUnavailable,
    Internal,
    NotFound,
    RouterError,
    ServiceError,
    Unavailable,
)


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
