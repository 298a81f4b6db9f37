"""A NUL character (U+0000) in any string field of a request is refused at the gRPC door with
INVALID_ARGUMENT naming the field, before a row is made of it; the same call without it routes."""

from __future__ import annotations

import grpc
import pytest

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.servers import serving

CASES = [
    ("Route", pb.RouteRequest(message="merge two pdfs\x00"), "message"),
    ("Route", pb.RouteRequest(message="merge pdfs", session_id="s\x00"), "session_id"),
    ("Route", pb.RouteRequest(message="merge pdfs", history=["ok", "b\x00d"]), "history[1]"),
    ("Route", pb.RouteRequest(message="merge pdfs", project_skills=[
        pb.InlineSkill(name="x", description="d\x00")]), "project_skills[0].description"),
    ("Activate", pb.ActivateRequest(name="pdf-tools", session_id="\x00"), "session_id"),
]


@pytest.mark.parametrize(("method", "request_", "field"), CASES)
def test_a_nul_in_a_string_field_is_invalid_argument_naming_it(
        engine: Engine, method: str, request_: object, field: str) -> None:
    with serving(engine) as served:
        with pytest.raises(grpc.RpcError) as caught:
            getattr(served.stub, method)(request_, timeout=30)
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        details = caught.value.details()  # type: ignore[attr-defined]
        assert str(details).startswith(f"{field} holds a NUL character"), details
        assert served.stub.Route(pb.RouteRequest(message="merge two pdfs"), timeout=30).skills
