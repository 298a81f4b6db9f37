"""Every entry of the one error table (``router.door.api.ERROR_TABLE``), raised by the Engine
under a real server, answered at both wires: the gRPC code at the gRPC port, its Connect code
and HTTP status at the JSON door, with the same message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.door.api import ERROR_TABLE, OTHER, Status
from router.engine import Engine
from router.errors import RouterError
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.connect import call
from tests.support.indexes import build_hash_index, open_engine
from tests.support.servers import make_stub, start_server
from tests.support.skills import DIAGNOSTICS, SKILLS

CASES = [*((error, status) for error, status in ERROR_TABLE), (KeyError, OTHER)]


@pytest.fixture(scope="module")
def own_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """An engine of this module's own (its ``route_turn`` is replaced per test)."""
    return open_engine(build_hash_index(SKILLS, tmp_path_factory.mktemp("errors"), DIAGNOSTICS))


@pytest.fixture(scope="module")
def both(own_engine: Engine) -> Iterator[RouterServer]:
    running = start_server(own_engine, http_port=0)
    try:
        yield running
    finally:
        running.stop(0)


def _grpc_answer(running: RouterServer) -> tuple[grpc.StatusCode, str]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        try:
            make_stub(channel).Route(pb.RouteRequest(message="merge two PDF files"))
        except grpc.RpcError as exc:
            return exc.code(), exc.details()
    raise AssertionError("the call did not fail")


@pytest.mark.parametrize(("error", "status"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_each_error_means_the_same_at_the_json_door(
        both: RouterServer, own_engine: Engine, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path, error: type[Exception], status: Status) -> None:
    words = f"{error.__name__} raised under {tmp_path.name}"

    def refuse(*args: object, **kwargs: object) -> None:
        raise error(words)

    monkeypatch.setattr(own_engine, "route_turn", refuse)
    code, details = _grpc_answer(both)
    assert both.json_door is not None
    reply = call(both.json_door.url, "Route", {"message": "merge two PDF files"})
    assert code is status.grpc
    assert (reply.status, reply.json()["code"]) == (status.connect_http, status.connect)
    assert reply.json()["message"] == details  # one message at both wires
    if issubclass(error, RouterError) and status is not OTHER and \
            status.grpc is not grpc.StatusCode.INTERNAL:
        assert details == words
    else:  # an unexpected failure keeps its words in the server log
        assert words not in details and "see the server log" in details
