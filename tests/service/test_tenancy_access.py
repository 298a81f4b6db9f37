"""Principals over gRPC through real servers and a real principals file: role refusals per
method, unknown tokens, delegation allowed and refused, client certificates, token-file tokens
beside the file, and a SIGHUP that rotates a token in a running ``serve``."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.access.roles import METHOD_ROLES
from router.cli import main
from router.client import SkillRouterClient
from router.engine import Engine
from router.errors import RouterError
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.certs import Certs, make_certs
from tests.support.indexes import index_argv, open_engine
from tests.support.principals import entry, principals_yaml
from tests.support.processes import cli_process
from tests.support.servers import start_server
from tests.support.skills import write_catalog

TOKENS = {"router": "tok-route", "watcher": "tok-ops", "keeper": "tok-admin",
          "door": "tok-door", "team": "tok-team"}
ROLES = {"router": ["route"], "watcher": ["ops"], "keeper": ["admin"],
         "door": ["route", "ops", "delegate"], "team": ["route", "admin"]}


def principals_text(tokens: dict[str, str], subject: str = "") -> str:
    carded = [entry("carded", "", ["ops"], client_cert_subject=subject)] if subject else []
    return principals_yaml(*(entry(name, token, ROLES[name]) for name, token in tokens.items()),
                           *carded)


@pytest.fixture(scope="module")
def principals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("principals") / "principals.yaml"
    path.write_text(principals_text(TOKENS))
    return path


@pytest.fixture(scope="module")
def gated(engine: Engine, principals: Path) -> Iterator[RouterServer]:
    running = start_server(engine, principals_file=str(principals))
    try:
        yield running
    finally:
        running.stop(0)


def client(port: int, token: str = "", principal: str = "", **auth: Any) -> SkillRouterClient:
    """A client with ``token``; acting for ``principal`` when given (on its one channel)."""
    made = SkillRouterClient(f"127.0.0.1:{port}", timeout=30.0, retries=0, token=token, **auth)
    return made.acting_for(principal) if principal else made


def outcome(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as exc:  # a stub's call
        return exc.code(), exc.details()  # type: ignore[attr-defined]
    except RouterError as exc:  # the client's
        assert exc.code is not None
        return exc.code, exc.details
    return grpc.StatusCode.OK, ""


REQUESTS: dict[str, Any] = {
    "Route": pb.RouteRequest(message="extract tables from a pdf"),
    "Explain": pb.RouteRequest(message="extract tables from a pdf"),
    "ListSkills": pb.ListSkillsRequest(), "GetIndexInfo": pb.GetIndexInfoRequest(),
    "Activate": pb.ActivateRequest(name="no-such-skill"),
    "ReadResource": pb.ReadResourceRequest(name="no-such-skill", path="x"),
    "ListResources": pb.ListResourcesRequest(name="no-such-skill"),
    "ValidateArguments": pb.ValidateArgumentsRequest(name="no-such-skill", arguments_json="{}"),
    "Feedback": pb.FeedbackRequest(skill="no-such-skill"),
    "Reindex": pb.ReindexRequest(),
    "SkillStats": pb.SkillStatsRequest(), "ListExamples": pb.ListExamplesRequest(),
    "PurgeExamples": pb.PurgeExamplesRequest(),  # INVALID_ARGUMENT once admitted: no change
    "ApproveSkill": pb.ApproveSkillRequest(),  # INVALID_ARGUMENT once admitted: no change
    "RevokeApproval": pb.RevokeApprovalRequest(),
}


def call_method(caller: SkillRouterClient, method: str) -> tuple[grpc.StatusCode, str]:
    stub = caller._stub
    return outcome(lambda: getattr(stub, method)(REQUESTS[method], timeout=30.0))


# an admitted Reindex would rebuild the shared index: test_an_admin_may_reindex admits one
CASES = [(name, method) for name in ("router", "watcher", "keeper")
         for method in sorted(METHOD_ROLES) if (name, method) != ("keeper", "Reindex")]


@pytest.mark.parametrize(("name", "method"), CASES)
def test_each_method_admits_its_roles_and_refuses_the_others(
        gated: RouterServer, name: str, method: str) -> None:
    (role,) = ROLES[name]  # the principals these cases take hold one role each
    allowed = role in METHOD_ROLES[method]
    with client(gated.port, TOKENS[name]) as caller:
        code, details = call_method(caller, method)
    if allowed:
        assert code not in (grpc.StatusCode.PERMISSION_DENIED,
                            grpc.StatusCode.UNAUTHENTICATED), (code, details)
    else:
        assert code is grpc.StatusCode.PERMISSION_DENIED, (code, details)
        assert f"requires role {' or '.join(METHOD_ROLES[method])}" in details
        assert f"principal {name!r} holds {role}" in details


def test_an_admin_may_reindex(tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    path = tmp_path / "principals.yaml"
    path.write_text(principals_text(TOKENS))
    running = start_server(open_engine(out), principals_file=str(path))
    try:
        with client(running.port, "tok-admin") as caller:
            assert caller.reindex().index_version
        with client(running.port, "tok-route") as caller:
            assert "requires role admin" in outcome(caller.reindex)[1]
    finally:
        running.stop(0)


@pytest.mark.parametrize("token", ["", "tok-rout", "tok-route-and-more", "tok-unknown"])
def test_a_missing_or_unknown_token_is_unauthenticated_and_health_stays_open(
        gated: RouterServer, token: str) -> None:
    with client(gated.port, token) as caller:
        assert outcome(caller.list_skills)[0] is grpc.StatusCode.UNAUTHENTICATED
        assert caller.health()


def test_a_delegate_is_served_as_the_named_principal_within_its_own_roles(
        gated: RouterServer) -> None:
    with client(gated.port, "tok-door") as door, client(gated.port, "tok-team") as team:
        as_team = door.acting_for("team")
        turn = as_team.route("extract tables from a pdf", session_id="team-conv")
        assert turn.catalog_text
        # the session is the team's: its own token may go on, the door itself may not
        assert team.route("and now merge them", session_id="team-conv").catalog_text
        code, details = outcome(lambda: door.route("hello", session_id="team-conv"))
        assert code is grpc.StatusCode.PERMISSION_DENIED and "another caller" in details
        # admin is the team's, not the door's: the delegated call has route only
        code, details = outcome(lambda: as_team.purge_examples(older_than_days=1e9))
        assert code is grpc.StatusCode.PERMISSION_DENIED and "requires role admin" in details
        code, details = outcome(as_team.skill_stats)  # ops is the door's, not the team's
        assert code is grpc.StatusCode.PERMISSION_DENIED and "requires role ops" in details
        assert door.skill_stats() is not None  # the door itself holds ops


def test_delegation_is_refused_without_the_role_or_for_an_unknown_name(
        gated: RouterServer) -> None:
    with client(gated.port, "tok-team", principal="router") as team:
        code, details = outcome(team.list_skills)
        assert code is grpc.StatusCode.PERMISSION_DENIED
        assert "x-skill-router-principal requires role delegate" in details
    with client(gated.port, "tok-door", principal="nobody") as door:
        code, details = outcome(door.list_skills)
        assert code is grpc.StatusCode.PERMISSION_DENIED and "'nobody'" in details
    with client(gated.port, "", principal="team") as anonymous:
        assert outcome(anonymous.list_skills)[0] is grpc.StatusCode.UNAUTHENTICATED


def test_an_open_server_refuses_the_delegation_header(served: Any) -> None:
    with client(served.running.port, principal="team") as caller:
        code, details = outcome(caller.list_skills)
        assert code is grpc.StatusCode.PERMISSION_DENIED and "requires role delegate" in details
        assert client(served.running.port).list_skills() is not None


def test_token_file_tokens_work_beside_the_principals_file(
        engine: Engine, principals: Path, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("legacy-token\n")
    with caplog.at_level("WARNING", logger="router.service.access"):
        running = start_server(engine, principals_file=str(principals),
                               auth_token_file=str(tokens))
    try:
        assert any("route, ops and admin" in r.getMessage() for r in caplog.records)
        with client(running.port, "legacy-token") as legacy:
            assert legacy.skill_stats() is not None and legacy.list_skills() is not None
            code, details = outcome(lambda: legacy.acting_for("team").list_skills())
            assert code is grpc.StatusCode.PERMISSION_DENIED and "delegate" in details
        with client(running.port, "tok-route") as router:
            assert "requires role ops" in outcome(router.skill_stats)[1]
    finally:
        running.stop(0)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def test_a_client_certificate_names_its_principal(engine: Engine, certs: Certs,
                                                  tmp_path: Path) -> None:
    path = tmp_path / "principals.yaml"
    path.write_text(principals_text(TOKENS, subject="CN=client"))
    running = start_server(engine, principals_file=str(path), tls_cert_file=str(
        certs.server_cert), tls_key_file=str(certs.server_key),
        tls_client_ca_file=str(certs.ca))
    mtls = {"ca_file": str(certs.ca), "cert_file": str(certs.client_cert),
            "key_file": str(certs.client_key)}
    try:
        with client(running.port, **mtls) as carded:  # no token: the certificate names it
            assert carded.skill_stats() is not None
            code, details = outcome(lambda: carded.route("hello"))
            assert code is grpc.StatusCode.PERMISSION_DENIED
            assert "principal 'carded' holds ops" in details
        with client(running.port, "tok-route", **mtls) as router:  # a token names first
            assert "principal 'router'" in outcome(router.skill_stats)[1]
    finally:
        running.stop(0)


def test_sighup_rotates_a_token_and_a_bad_file_keeps_the_old(tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    path = tmp_path / "principals.yaml"
    path.write_text(principals_text({"router": "tok-old"}))
    with cli_process("serve", "--index", str(out), "--port", "0", "--metrics-port", "0",
                     "--principals", str(path)) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        with client(port, "tok-old") as old, client(port, "tok-new") as new:
            assert old.list_skills() is not None
            path.write_text(principals_text({"router": "tok-new"}))
            proc.send_signal(signal.SIGHUP)
            wait_for_log(proc, "reloaded the principals")
            assert outcome(old.list_skills)[0] is grpc.StatusCode.UNAUTHENTICATED
            assert new.list_skills() is not None
            path.write_text("principals:\n  - name: router\n    roles: [root]\n")
            proc.send_signal(signal.SIGHUP)
            assert f"{path}:3: " in wait_for_log(proc, "kept the principals in use")
            assert new.list_skills() is not None


def wait_for_log(proc: Any, text: str) -> str:
    """The server's stderr line holding ``text`` (read until it comes; the process's end or
    the test's timeout bound the wait)."""
    for line in proc.stderr:
        if text in line:
            return str(line)
    raise AssertionError(f"the server ended without logging {text!r}")


def test_list_examples_shows_session_ids_to_ops_principals_of_the_file_only(
        tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    path, tokens = tmp_path / "principals.yaml", tmp_path / "tokens"
    path.write_text(principals_text(TOKENS))
    tokens.write_text("legacy-token\n")
    running = start_server(open_engine(out), principals_file=str(path),
                           auth_token_file=str(tokens))
    try:
        with client(running.port, "tok-route") as router:
            for session in ("conv-a", "conv-b"):
                turn = router.route("extract the tables from this pdf", session_id=session)
                router.activate(turn.skills[0].name, session_id=session,
                                route_id=turn.route_id)
        with client(running.port, "tok-ops") as watcher, \
                client(running.port, "legacy-token") as legacy:
            shown = {e.session_id for e in watcher.list_examples().examples}
            hidden = {e.session_id for e in legacy.list_examples().examples}
        assert shown == {"conv-a", "conv-b"}
        assert hidden == {""}
    finally:
        running.stop(0)
