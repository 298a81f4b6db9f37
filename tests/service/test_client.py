"""SkillRouterClient against a real server: every method, retries on UNAVAILABLE, timeouts, and
each refusal raised as its ``router.errors`` class with the status on it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from router.access.model import ROUTE, Principal
from router.client import SkillRouterClient, service_config
from router.engine import Engine
from router.errors import (
    DeadlineExceeded,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from router.service.server import RouterServer, build_server
from router.service.servicer import SkillRouterServicer
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.ports import free_port
from tests.support.servers import server_config, start_server


@pytest.fixture()
def client(tree_server: RouterServer) -> Iterator[SkillRouterClient]:
    with SkillRouterClient(f"127.0.0.1:{tree_server.port}", timeout=5.0) as c:
        yield c


def test_route_and_explain(client: SkillRouterClient) -> None:
    route = client.route("extract the tables from this PDF file", session_id="client-1",
                         format="markdown", top_k=2)
    assert "pdf-tools" in [s.name for s in route.skills]
    assert "- **pdf-tools**:" in route.catalog_text
    explained = client.explain("extract the tables from this PDF file")
    assert explained.route.skills and explained.candidates


def test_activate_read_validate(client: SkillRouterClient) -> None:
    activation = client.activate("pdf-tools", session_id="client-2")
    assert activation.content and not activation.already_active
    assert client.activate("pdf-tools", session_id="client-2").already_active
    resource = client.read_resource("pdf-tools", activation.resources[0])
    assert resource.size == len(resource.content) > 0
    checked = client.validate_arguments("book-meeting", '{"date": "2025-01-02", "attendees": 3}')
    assert checked.valid and json.loads(checked.arguments_json)["minutes"] == 30


def test_route_id_passthrough_and_feedback(client: SkillRouterClient,
                                           tree_engine: Engine) -> None:
    from router.learning.file_store import FileStore

    assert tree_engine.index_dir is not None
    route = client.route("extract the tables from this PDF file", session_id="client-3")
    client.activate("pdf-tools", session_id="client-3", route_id=route.route_id)
    assert client.feedback("pdf-tools", "wrong_skill", session_id="client-3",
                           route_id=route.route_id).recorded
    rows = [r for r in FileStore(tree_engine.index_dir).read_rows() if r.session == "client-3"]
    assert [(r.kind, r.route_id, bool(r.query)) for r in rows] == [
        ("route", route.route_id, True), ("activate", route.route_id, True),
        ("feedback", route.route_id, True)]
    with pytest.raises(ValueError, match="unknown outcome"):
        client.feedback("pdf-tools", "great")


def test_list_info_health(client: SkillRouterClient, tree_engine: Engine) -> None:
    assert "pdf-tools" in {s.name for s in client.list_skills().skills}
    assert client.index_info().version == tree_engine.info().version
    assert client.health() is True


def test_a_missing_skill_is_not_found(client: SkillRouterClient) -> None:
    with pytest.raises(NotFound) as info:
        client.activate("no-such-skill")
    assert info.value.code == grpc.StatusCode.NOT_FOUND
    assert "no-such-skill" in info.value.details and str(info.value) == info.value.details
    assert isinstance(info.value.__cause__, grpc.RpcError)  # the gRPC error, for a traceback


def test_an_unusable_request_is_invalid_request(client: SkillRouterClient) -> None:
    with pytest.raises(InvalidRequest) as info:
        client.purge_examples()  # neither a skill nor an age: the server refuses it
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT and info.value.details


def test_no_token_is_unauthenticated(tree_engine: Engine, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("tok-accepted\n")
    running = start_server(tree_engine, auth_token_file=str(tokens))
    target = f"127.0.0.1:{running.port}"
    try:
        with SkillRouterClient(target, timeout=5.0, retries=0) as anonymous:
            with pytest.raises(Unauthenticated) as refused:
                anonymous.index_info()
            assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED
        with SkillRouterClient(target, timeout=5.0, retries=0, token="tok-accepted") as known:
            assert known.index_info().version == tree_engine.info().version
    finally:
        running.stop(0)


def test_a_missing_role_is_permission_denied(tree_engine: Engine) -> None:
    reader = Principal("reader", roles=frozenset({ROUTE}))
    running = start_server(tree_engine, caller_of=lambda context: reader)
    try:
        with SkillRouterClient(f"127.0.0.1:{running.port}", timeout=5.0, retries=0) as client:
            assert client.list_skills().skills
            with pytest.raises(PermissionDenied) as denied:
                client.list_skills(all_catalogs=True)  # role ops or admin
            assert denied.value.code == grpc.StatusCode.PERMISSION_DENIED
            assert "ops or admin" in denied.value.details
    finally:
        running.stop(0)


def test_unknown_format_is_value_error(client: SkillRouterClient) -> None:
    with pytest.raises(ValueError, match="unknown format"):
        client.route("hello", format="yaml")


def test_service_config_retries_unavailable() -> None:
    config = json.loads(service_config(3))
    policy = config["methodConfig"][0]["retryPolicy"]
    assert policy["maxAttempts"] == 4 and policy["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert json.loads(service_config(10))["methodConfig"][0]["retryPolicy"]["maxAttempts"] == 5


def _start_later(engine: Engine, port: int, delay: float,
                 holder: list[RouterServer]) -> threading.Thread:
    running = build_server(engine, server_config(), f"127.0.0.1:{port}")  # bound, not serving
    holder.append(running)

    def run() -> None:
        time.sleep(delay)  # the server is down for at least this long, however fast the machine
        running.server.start()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_retries_until_server_comes_up(tree_engine: Engine) -> None:
    port, holder = free_port(), list[RouterServer]()
    thread = _start_later(tree_engine, port, 0.15, holder)
    try:
        with SkillRouterClient(f"127.0.0.1:{port}", timeout=10.0, retries=4) as client:
            started = time.monotonic()
            assert client.index_info().version == tree_engine.info().version
            assert time.monotonic() - started >= 0.1
    finally:
        thread.join()
        for running in holder:
            running.stop(0)


def test_without_retries_unavailable_fails_fast() -> None:
    with SkillRouterClient(f"127.0.0.1:{free_port()}", timeout=60.0, retries=0) as client:
        started = time.monotonic()
        with pytest.raises(Unavailable) as info:
            client.health()
        assert info.value.code == grpc.StatusCode.UNAVAILABLE
        assert time.monotonic() - started < 30.0  # refused at once, not held to the deadline


class _HeldServicer(SkillRouterServicer):
    """Answers GetIndexInfo only once ``release`` is set."""

    release = threading.Event()

    def GetIndexInfo(self, request: pb.GetIndexInfoRequest,
                     context: grpc.ServicerContext) -> pb.GetIndexInfoResponse:
        self.release.wait(timeout=30)
        return super().GetIndexInfo(request, context)


def test_timeout_is_deadline_exceeded(tree_engine: Engine) -> None:
    servicer = _HeldServicer(tree_engine)
    servicer.release = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_SkillRouterServicer_to_server(  # type: ignore[no-untyped-call]
        servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with SkillRouterClient(f"127.0.0.1:{port}", timeout=0.2) as client:
            with pytest.raises(DeadlineExceeded) as info:
                client.index_info()  # the server holds it until after the deadline
            assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        servicer.release.set()
        server.stop(0)


@pytest.mark.parametrize(("timeout", "retries"), [(0.0, 3), (1.0, -1)])
def test_bad_settings_are_refused(timeout: float, retries: int) -> None:
    with pytest.raises(ValueError):
        SkillRouterClient("127.0.0.1:1", timeout=timeout, retries=retries)
