"""Authenticated callers through a real server: bearer tokens, TLS and mutual TLS; accepted,
refused, and the health service open for probes."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from router.bearer import accepts
from router.cli import auth_args, build_parser, main
from router.client import SkillRouterClient
from router.config import ServerConfig
from router.credentials import CallerAuth
from router.door.channel import open_channel
from router.engine import Engine
from router.errors import InvalidRequest, RouterError, Unauthenticated
from router.service.auth import load_tokens, presented_token, warn_if_open
from router.service.server import RouterServer, build_server
from router.service.tls import start_health_listener
from tests.support import REPO
from tests.support.certs import Certs, make_certs
from tests.support.indexes import index_argv, open_engine
from tests.support.ports import free_ports
from tests.support.skills import write_catalog

SERVICE = "router.v1.SkillRouter"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text("# callers\ntoken-gateway\n\ntoken-ops\n")
    return path


@contextmanager
def server(engine: Engine, **settings: Any) -> Iterator[RouterServer]:
    config = ServerConfig(max_workers=4, grace_seconds=1.0, **settings)
    running = build_server(engine, config, "127.0.0.1:0")
    running.server.start()
    try:
        yield running
    finally:
        running.stop(0)


def code_of(client: SkillRouterClient) -> grpc.StatusCode:
    try:
        client.index_info()
    except RouterError as exc:
        assert exc.code is not None
        return exc.code
    return grpc.StatusCode.OK


def client(port: int, **auth: Any) -> SkillRouterClient:
    return SkillRouterClient(f"127.0.0.1:{port}", timeout=30.0, retries=0, **auth)


# --- bearer tokens -------------------------------------------------------------------------

@pytest.mark.parametrize(("token", "code"), [
    ("token-ops", grpc.StatusCode.OK), ("token-gateway", grpc.StatusCode.OK),
    ("", grpc.StatusCode.UNAUTHENTICATED), ("token-op", grpc.StatusCode.UNAUTHENTICATED),
    ("token-ops-and-more", grpc.StatusCode.UNAUTHENTICATED)])
def test_a_token_is_required_and_checked(engine: Engine, token_file: Path, token: str,
                                         code: grpc.StatusCode) -> None:
    with server(engine, auth_token_file=str(token_file)) as running, \
            client(running.port, token=token) as caller:
        assert code_of(caller) is code


def test_a_refused_call_says_what_to_send_and_health_stays_open(engine: Engine,
                                                                token_file: Path) -> None:
    with server(engine, auth_token_file=str(token_file)) as running, \
            client(running.port) as caller:
        with pytest.raises(Unauthenticated) as refused:
            caller.route("merge PDF documents")
        assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
        assert "authorization: Bearer" in refused.value.details
        assert caller.health() is True  # probes need no token


def test_tokens_from_an_environment_variable(engine: Engine,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROUTER_TOKENS", "alpha, beta")
    with server(engine, auth_token_env="ROUTER_TOKENS") as running:
        with client(running.port, token="beta") as caller:
            assert code_of(caller) is grpc.StatusCode.OK
        with client(running.port, token="gamma") as caller:
            assert code_of(caller) is grpc.StatusCode.UNAUTHENTICATED


# --- TLS and mutual TLS --------------------------------------------------------------------

def tls(certs: Certs, **more: Any) -> dict[str, Any]:
    return {"tls_cert_file": str(certs.server_cert), "tls_key_file": str(certs.server_key),
            **more}


def test_tls_accepts_a_client_trusting_its_ca_and_refuses_plaintext(engine: Engine,
                                                                    certs: Certs) -> None:
    with server(engine, **tls(certs)) as running:
        with client(running.port, ca_file=str(certs.ca)) as caller:
            assert code_of(caller) is grpc.StatusCode.OK
            assert caller.health() is True
        with client(running.port) as plaintext:
            assert code_of(plaintext) is grpc.StatusCode.UNAVAILABLE
        with client(running.port, ca_file=str(certs.rogue_ca)) as wrong_ca:
            assert code_of(wrong_ca) is grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(("which", "code"), [
    ("client", grpc.StatusCode.OK), ("none", grpc.StatusCode.UNAVAILABLE),
    ("rogue", grpc.StatusCode.UNAVAILABLE)])
def test_mutual_tls_needs_a_client_certificate_from_the_trusted_ca(
        engine: Engine, certs: Certs, which: str, code: grpc.StatusCode) -> None:
    pairs = {"client": {"cert_file": str(certs.client_cert), "key_file": str(certs.client_key)},
             "rogue": {"cert_file": str(certs.rogue_cert), "key_file": str(certs.rogue_key)},
             "none": {}}
    with server(engine, **tls(certs, tls_client_ca_file=str(certs.ca))) as running, \
            client(running.port, ca_file=str(certs.ca), **pairs[which]) as caller:
        assert code_of(caller) is code


def test_tls_and_token_together(engine: Engine, certs: Certs, token_file: Path) -> None:
    with server(engine, **tls(certs, auth_token_file=str(token_file))) as running:
        with client(running.port, ca_file=str(certs.ca), token="token-ops") as caller:
            assert code_of(caller) is grpc.StatusCode.OK
        with client(running.port, ca_file=str(certs.ca)) as caller:
            assert code_of(caller) is grpc.StatusCode.UNAUTHENTICATED
            assert caller.health() is True


def test_the_plaintext_health_port_serves_probes_while_the_api_is_tls() -> None:
    servicer = health.HealthServicer()
    servicer.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
    port = free_ports(1)[0]
    listener = start_health_listener(servicer, ServerConfig(health_port=port))
    assert listener is not None
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
            reply = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=30)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            servicer.enter_graceful_shutdown()  # shared with the API port: both report it
            reply = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=30)
            assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
    finally:
        listener.stop(0)
    assert start_health_listener(servicer, ServerConfig(health_port=0)) is None


def test_reindex_target_takes_the_same_options(tmp_path: Path, certs: Certs, token_file: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    engine = open_engine(out)
    with server(engine, **tls(certs, tls_client_ca_file=str(certs.ca),
                              auth_token_file=str(token_file))) as running:
        target = ["reindex", "--target", f"127.0.0.1:{running.port}", "--timeout", "60",
                  "--ca-file", str(certs.ca), "--cert-file", str(certs.client_cert),
                  "--key-file", str(certs.client_key)]
        assert main(target) == 1
        assert "UNAUTHENTICATED" in capsys.readouterr().err
        assert main([*target, "--token-file", str(token_file.parent / "one")]) == 2
        (token_file.parent / "one").write_text("token-ops\n")
        assert main([*target, "--token-file", str(token_file.parent / "one")]) == 0
        assert '"swapped": false' in capsys.readouterr().out


# --- settings that cannot work refuse to start ---------------------------------------------

@pytest.mark.parametrize("settings", [
    {"tls_cert_file": "/nonexistent/cert.pem", "tls_key_file": "/nonexistent/key.pem"},
    {"tls_client_ca_file": "/nonexistent/ca.pem"},
    {"auth_token_file": "/nonexistent/tokens"},
    {"auth_token_env": "SKILL_ROUTER_TEST_UNSET_VARIABLE"}])
def test_unusable_auth_settings_refuse_to_start(engine: Engine,
                                                settings: dict[str, str]) -> None:
    with pytest.raises(InvalidRequest):
        build_server(engine, ServerConfig(**settings), "127.0.0.1:0")  # type: ignore[arg-type]


def test_an_empty_token_file_refuses_to_start(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# nobody yet\n\n")
    with pytest.raises(InvalidRequest, match="hold no token"):
        load_tokens(ServerConfig(auth_token_file=str(path)))
    assert load_tokens(ServerConfig()) == ()


def test_token_matching() -> None:
    tokens = (b"abc", b"xyz")
    assert accepts(tokens, b"xyz") and not accepts(tokens, b"ab") and not accepts(tokens, None)
    assert presented_token([("authorization", "bearer  abc ")]) == b"abc"
    assert presented_token([("authorization", "Basic abc")]) is None
    assert presented_token([("x-other", "Bearer abc")]) is None


def test_a_client_certificate_without_its_key_is_refused(certs: Certs) -> None:
    with pytest.raises(ValueError, match="both the certificate and the key"):
        open_channel("127.0.0.1:1", CallerAuth(ca_file=str(certs.ca),
                                               cert_file=str(certs.client_cert)))


@pytest.mark.parametrize(("settings", "warning"), [
    ({"host": "127.0.0.1"}, None),
    ({"host": "0.0.0.0"}, "no caller authentication"),
    ({"host": "0.0.0.0", "auth_token_env": "T"}, "plaintext"),
    ({"host": "0.0.0.0", "auth_token_env": "T", "tls_cert_file": "c", "tls_key_file": "k"},
     None),
    ({"host": "0.0.0.0", "tls_cert_file": "c", "tls_key_file": "k", "tls_client_ca_file": "ca"},
     None)])
def test_an_open_server_beyond_loopback_is_warned_about(
        settings: dict[str, str], warning: str | None,
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="router.service.auth"):
        warn_if_open(ServerConfig(**settings))  # type: ignore[arg-type]
    messages = [r.getMessage() for r in caplog.records]
    assert (messages == []) if warning is None else (warning in messages[0])


def test_serve_flags_turn_on_tls_tokens_and_the_health_port(
        tmp_path: Path, certs: Certs, token_file: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    health_port = free_ports(1)[0]
    argv = [sys.executable, "-m", "router.cli", "serve", "--index", str(out), "--host",
            "127.0.0.1", "--port", "0", "--metrics-port", "0", "--tls-cert",
            str(certs.server_cert), "--tls-key", str(certs.server_key), "--token-file",
            str(token_file), "--health-port", str(health_port)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        with client(port, ca_file=str(certs.ca), token="token-gateway") as caller:
            assert code_of(caller) is grpc.StatusCode.OK
        with client(port, ca_file=str(certs.ca)) as caller:
            assert code_of(caller) is grpc.StatusCode.UNAUTHENTICATED
        with grpc.insecure_channel(f"127.0.0.1:{health_port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
            reply = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=30)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- the bind rule: beyond loopback, authenticated callers or an explicit opt-out -----------

@pytest.mark.parametrize(("flags", "env"), [
    (["--host", "0.0.0.0"], {}),
    (["--host", "::"], {}),
    (["--host", "0.0.0.0", "--tls-cert", "c.pem", "--tls-key", "k.pem"], {}),  # TLS alone
    ([], {"SKILL_ROUTER_SERVER_HOST": "0.0.0.0"}),  # server.host from the configuration
])
def test_serve_beyond_loopback_without_caller_auth_refuses_to_start(
        flags: list[str], env: dict[str, str]) -> None:
    argv = [sys.executable, "-m", "router.cli", "serve", "--index", "/nonexistent/index",
            "--port", "0", "--metrics-port", "0", *flags]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.startswith("error: refusing to listen on") and "\n" not in message
    for flag in ("--token-file", "--token-env", "--tls-client-ca", "--allow-unauthenticated"):
        assert flag in message


def test_serve_with_the_opt_out_starts_open_and_warns(tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    argv = [sys.executable, "-m", "router.cli", "serve", "--index", str(out), "--host",
            "0.0.0.0", "--port", "0", "--metrics-port", "0", "--allow-unauthenticated"]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 0.0.0.0:" in line, line
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        with client(port) as caller:  # no token, no certificate
            assert code_of(caller) is grpc.StatusCode.OK
        proc.send_signal(signal.SIGTERM)
        _, log = proc.communicate(timeout=60)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "no caller authentication (server.allow_unauthenticated)" in log


def test_serve_names_the_tokens_it_accepts_and_keeps_the_old_flags_as_aliases(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth_args, "_warned", set())
    parser = build_parser()
    accept = parser.parse_args(["serve", "--accept-token-file", "f", "--accept-token-env", "V"])
    with caplog.at_level(logging.WARNING):
        assert auth_args.server_auth_flags(accept) == {"auth_token_file": "f",
                                                       "auth_token_env": "V"}
    assert "deprecated" not in caplog.text
    old = parser.parse_args(["serve", "--token-file", "f", "--token-env", "V"])
    with caplog.at_level(logging.WARNING):
        assert auth_args.server_auth_flags(old) == {"auth_token_file": "f",
                                                    "auth_token_env": "V"}
        auth_args.server_auth_flags(old)
    warned = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert len(warned) == 2  # once per flag, however often the flags are read
    assert "serve --token-file is deprecated: use --accept-token-file" in warned[0]
    both = parser.parse_args(["serve", "--token-file", "old", "--accept-token-file", "new"])
    assert auth_args.server_auth_flags(both) == {"auth_token_file": "new"}
