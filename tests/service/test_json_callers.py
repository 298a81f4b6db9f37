"""Callers at the JSON door, resolved by the gRPC door's own gate: bearer tokens of a principals
file (roles, rates with ``retry-after-ms``), and over TLS a client certificate whose subject
names a principal."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.engine import Engine
from router.service.server import RouterServer
from tests.support.certs import Certs, make_certs
from tests.support.connect import call
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server

ROUTE = {"message": "merge two PDF files"}


@pytest.fixture(scope="module")
def gated(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterServer]:
    folder = tmp_path_factory.mktemp("callers")
    principals = write_principals(
        folder / "principals.yaml", entry("gateway", "tok-gateway", ["route"]),
        entry("slow", "tok-slow", ["route"], rate={"per_second": 0.001, "burst": 1}))
    running = start_server(engine, http_port=0, principals_file=str(principals))
    try:
        yield running
    finally:
        running.stop(0)


def _url(running: RouterServer) -> str:
    assert running.json_door is not None
    return running.json_door.url


def test_a_call_without_a_token_is_unauthenticated(gated: RouterServer) -> None:
    reply = call(_url(gated), "Route", ROUTE)
    assert (reply.status, reply.json()["code"]) == (401, "unauthenticated")
    assert "authorization: Bearer" in reply.json()["message"]
    wrong = call(_url(gated), "Route", ROUTE, {"Authorization": "Bearer nope"})
    assert wrong.status == 401


def test_a_principals_roles_bound_what_it_may_call(gated: RouterServer) -> None:
    token = {"Authorization": "Bearer tok-gateway"}
    assert call(_url(gated), "Route", ROUTE, token).status == 200
    denied = call(_url(gated), "Reindex", {}, token)
    assert (denied.status, denied.json()["code"]) == (403, "permission_denied")
    assert "requires role" in denied.json()["message"]


def test_a_principal_over_its_rate_is_told_when_to_retry(gated: RouterServer) -> None:
    token = {"Authorization": "Bearer tok-slow"}
    assert call(_url(gated), "Route", ROUTE, token).status == 200
    over = call(_url(gated), "Route", ROUTE, token)
    assert (over.status, over.json()["code"]) == (429, "resource_exhausted")
    assert int(over.headers["trailer-retry-after-ms"]) > 0
    assert "over its rate" in over.json()["message"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def mutual(engine: Engine, certs: Certs,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterServer]:
    principals = write_principals(
        tmp_path_factory.mktemp("carded") / "principals.yaml",
        entry("carded", "", ["route"], client_cert_subject="CN=client"))
    running = start_server(engine, http_port=0, principals_file=str(principals),
                           tls_cert_file=str(certs.server_cert),
                           tls_key_file=str(certs.server_key),
                           tls_client_ca_file=str(certs.ca))
    try:
        yield running
    finally:
        running.stop(0)


def _tls(certs: Certs, cert: Path | None, key: Path | None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(certs.ca))
    if cert is not None and key is not None:
        context.load_cert_chain(str(cert), str(key))
    return context


def test_a_client_certificate_names_the_caller_over_tls(mutual: RouterServer,
                                                        certs: Certs) -> None:
    url = _url(mutual)
    assert url.startswith("https://")
    reply = call(url, "Route", ROUTE, tls=_tls(certs, certs.client_cert, certs.client_key))
    assert reply.status == 200 and "skills" in reply.json()
    denied = call(url, "Reindex", {}, tls=_tls(certs, certs.client_cert, certs.client_key))
    assert denied.status == 403 and "carded" in denied.json()["message"]
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        call(url, "Route", ROUTE, tls=_tls(certs, None, None))  # no certificate: no handshake
