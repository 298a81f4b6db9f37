"""The gRPC port's connection limits (router.service.connections): the configuration becomes
the grpc server's options (pure), and on a real server on port 0 a raw TCP connection that sent
the HTTP/2 client preface and nothing more is sent a GOAWAY and closed once idle, and a
connection past the cap is closed before any HTTP/2."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from router.config import Config, ServerConfig, load_config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.errors import InvalidRequest
from router.service.connections import AGE, AGE_GRACE, CAP, IDLE, connection_options
from router.service.server import RouterServer
from tests.support.servers import start_server
from tests.support.skills import skill_record
from tests.support.snapshots import snapshot_of

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # length 0, type 4, flags 0, stream 0
SETTINGS, GOAWAY = 4, 7
UPPER_BOUND = 60.0  # seconds: generous, for a loaded machine; the limits under test are 1 s


def test_the_configuration_becomes_the_servers_options() -> None:
    assert connection_options(ServerConfig(), files=65536) == [(IDLE, 300_000), (CAP, 1000)]
    assert connection_options(ServerConfig(
        max_connection_idle_seconds=1.5, max_connection_age_seconds=1800,
        max_connection_age_grace_seconds=30, max_connections=5000), files=4096) == [
        (IDLE, 1500), (AGE, 1_800_000), (AGE_GRACE, 30_000), (CAP, 2048)]  # half the files
    assert connection_options(ServerConfig(
        max_connection_idle_seconds=0, max_connection_age_seconds=60,
        max_connection_age_grace_seconds=0, max_connections=0)) == [(AGE, 60_000)]


def test_the_limits_are_read_from_the_environment_and_checked() -> None:
    env = {"SKILL_ROUTER_SERVER_MAX_CONNECTION_IDLE_SECONDS": "5",
           "SKILL_ROUTER_SERVER_MAX_CONNECTION_AGE_SECONDS": "600",
           "SKILL_ROUTER_SERVER_MAX_CONNECTION_AGE_GRACE_SECONDS": "10",
           "SKILL_ROUTER_SERVER_MAX_CONNECTIONS": "20"}
    server = load_config(env=env).server
    assert (server.max_connection_idle_seconds, server.max_connection_age_seconds,
            server.max_connection_age_grace_seconds, server.max_connections) == (5, 600, 10, 20)
    assert load_config(env={}).server.max_connection_idle_seconds == 300
    with pytest.raises(InvalidRequest, match=r"server\.max_connections is -1"):
        load_config(env={"SKILL_ROUTER_SERVER_MAX_CONNECTIONS": "-1"})


@pytest.fixture()
def server(request: pytest.FixtureRequest) -> Iterator[RouterServer]:
    engine = Engine(snapshot_of([skill_record("pdf-tools", "Extracts tables from PDF files.")]),
                    Config(), HashEmbedder())
    running = start_server(engine, metrics_port=0, **request.param)
    try:
        yield running
    finally:
        running.stop(0)
        engine.close()


def connect(port: int) -> socket.socket:
    """A raw connection that sent the client preface and an empty SETTINGS frame."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=UPPER_BOUND)
    conn.sendall(PREFACE + EMPTY_SETTINGS)
    return conn


def frame_types(conn: socket.socket, *, until_first: bool = False) -> list[int]:
    """The types of the frames the server sends, read until it closes the connection (or,
    ``until_first``, until one frame has come); a timeout fails the test."""
    data, types = b"", []
    while True:
        try:
            chunk = conn.recv(65536)
        except ConnectionResetError:
            chunk = b""
        data += chunk
        while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
            types.append(data[3])
            data = data[9 + int.from_bytes(data[:3], "big"):]
        if not chunk or (until_first and types):
            return types


@pytest.mark.parametrize("server", [{"max_connection_idle_seconds": 1.0}], indirect=True)
def test_an_idle_connection_gets_a_goaway_and_is_closed(server: RouterServer) -> None:
    started = time.monotonic()
    with connect(server.port) as conn:
        types = frame_types(conn)  # returns at EOF: socket.timeout (a failure) otherwise
    assert types[0] == SETTINGS and GOAWAY in types
    assert time.monotonic() - started < UPPER_BOUND


@pytest.mark.parametrize("server", [{"max_connections": 2}], indirect=True)
def test_a_connection_past_the_cap_is_closed_at_once(server: RouterServer) -> None:
    kept = [connect(server.port) for _ in range(2)]
    try:
        for conn in kept:
            assert frame_types(conn, until_first=True)[0] == SETTINGS  # accepted: HTTP/2
        with connect(server.port) as refused:
            assert frame_types(refused) == []  # closed before any frame
    finally:
        for conn in kept:
            conn.close()
