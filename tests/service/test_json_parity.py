"""The JSON door and the gRPC port give the same answers, field by field, for the same requests
on the demo catalog (examples/skills, indexed with the hash test embedder) over one real server
on port 0: Route, Activate, Explain, ListSkills, ReadResource, GetIndexInfo. Each answer's JSON
is read back into its message and compared with the gRPC answer whole; only a Route's
``route_id`` (fresh for every turn) is set aside. Each wire gets sessions of its own, so
neither sees the other's turns."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.protobuf.message import Message

from router.engine import Engine
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support import REPO
from tests.support.connect import call, parsed
from tests.support.indexes import index_folder, open_engine
from tests.support.servers import serving

DEMO = REPO / "examples" / "skills"
TURN = "pull the tables out of this quarterly report pdf"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return open_engine(index_folder(DEMO, tmp_path_factory.mktemp("demo")))


@pytest.fixture(scope="module")
def wires(demo: Engine) -> Iterator[tuple[RouterServer, pb_grpc.SkillRouterStub]]:
    with serving(demo, http_port=0) as served:
        yield served.running, served.stub


def _both(wires: tuple[RouterServer, pb_grpc.SkillRouterStub], method: str,
          grpc_request: Message, json_request: Message) -> tuple[Message, Message]:
    running, stub = wires
    assert running.json_door is not None
    by_grpc = getattr(stub, method)(grpc_request)
    by_json = parsed(call(running.json_door.url, method, json_request), type(by_grpc))
    return by_grpc, by_json


def _same(by_grpc: Message, by_json: Message, *aside: str) -> None:
    for name in aside:
        assert getattr(by_grpc, name) and getattr(by_json, name)  # present at both wires
        by_grpc.ClearField(name)  # type: ignore[arg-type]
        by_json.ClearField(name)  # type: ignore[arg-type]
    assert by_json == by_grpc
    assert by_json.ListFields(), "an empty answer proves nothing"


def test_route_turns_are_the_same_at_both_wires(wires: tuple[RouterServer,
                                                            pb_grpc.SkillRouterStub]) -> None:
    for turn, message in enumerate((TURN, "and merge it with last year's pdf", "thanks")):
        history = [TURN] if turn else []
        by_grpc, by_json = _both(
            wires, "Route",
            pb.RouteRequest(message=message, session_id="grpc-session", history=history),
            pb.RouteRequest(message=message, session_id="json-session", history=history))
        _same(by_grpc, by_json, "route_id")
        assert isinstance(by_grpc, pb.RouteResponse)
    first = _both(wires, "Route", pb.RouteRequest(message=TURN), pb.RouteRequest(message=TURN))
    assert any(s.name == "pdf-extract" for s in first[1].skills)  # type: ignore[attr-defined]


def test_explain_is_the_same_at_both_wires(wires: tuple[RouterServer,
                                                       pb_grpc.SkillRouterStub]) -> None:
    request = pb.RouteRequest(message=TURN, top_k=3)
    _same(*_both(wires, "Explain", request, request))


def test_activate_is_the_same_at_both_wires(wires: tuple[RouterServer,
                                                        pb_grpc.SkillRouterStub]) -> None:
    by_grpc, by_json = _both(wires, "Activate",
                             pb.ActivateRequest(name="pdf-extract", session_id="grpc-act"),
                             pb.ActivateRequest(name="pdf-extract", session_id="json-act"))
    _same(by_grpc, by_json)
    assert "scripts/extract_tables.py" in by_json.resources  # type: ignore[attr-defined]
    again = _both(wires, "Activate",
                  pb.ActivateRequest(name="pdf-extract", session_id="grpc-act"),
                  pb.ActivateRequest(name="pdf-extract", session_id="json-act"))
    _same(*again)
    assert again[1].already_active  # type: ignore[attr-defined]


def test_listings_and_files_are_the_same_at_both_wires(
        wires: tuple[RouterServer, pb_grpc.SkillRouterStub]) -> None:
    listing = pb.ListSkillsRequest(include_files=True)
    _same(*_both(wires, "ListSkills", listing, listing))
    read = pb.ReadResourceRequest(name="pdf-extract", path="scripts/extract_tables.py")
    by_grpc, by_json = _both(wires, "ReadResource", read, read)
    _same(by_grpc, by_json)
    on_disk = (DEMO / "pdf-extract" / "scripts" / "extract_tables.py").read_bytes()
    assert by_json.content == on_disk  # type: ignore[attr-defined]  # bytes: base64 in JSON
    info = pb.GetIndexInfoRequest()
    _same(*_both(wires, "GetIndexInfo", info, info))
