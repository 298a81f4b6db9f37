"""JWT callers over a real gRPC port, against an identity provider on loopback: a token of the
issuer routes as its principal (its roles checked), a bad one is UNAUTHENTICATED, a key
published later works without a restart, the provider down does not stop a caller whose key
is cached, and many calls fetch the keys once."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.engine import Engine
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.support.oidc import Provider, identity_provider, oidc_section, rsa_key
from tests.support.servers import make_stub, start_server

ROUTE = pb.RouteRequest(message="extract the tables from this PDF invoice")


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with identity_provider() as running:
        yield running


@pytest.fixture(scope="module")
def server(engine: Engine, provider: Provider,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterServer]:
    path: Path = tmp_path_factory.mktemp("oidc") / "principals.yaml"
    static = hashlib.sha256(b"tok-static").hexdigest()
    path.write_text(oidc_section(provider) + "principals:\n"
                    "  - name: payments-gateway\n    subject: payments-client\n"
                    "    roles: [route]\n    catalogs: '*'\n"
                    "  - name: watcher\n    subject: watcher-client\n    roles: [ops]\n"
                    "    catalogs: '*'\n"
                    f"  - name: legacy\n    token_sha256: \"{static}\"\n    roles: [route]\n"
                    "    catalogs: '*'\n")
    running = start_server(engine, principals_file=str(path))
    yield running
    running.stop(0)


def call(server: RouterServer, token: str,
         method: str = "Route") -> tuple[grpc.StatusCode, object]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = make_stub(channel)
        request = ROUTE if method == "Route" else pb.SkillStatsRequest()
        try:
            reply = getattr(stub, method)(request, timeout=30,
                                          metadata=[("authorization", f"Bearer {token}")])
        except grpc.RpcError as exc:
            return exc.code(), exc.details()  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, reply


def test_a_token_of_the_issuer_routes_as_its_principal(server: RouterServer,
                                                       provider: Provider) -> None:
    code, reply = call(server, provider.token("payments-client"))
    assert code is grpc.StatusCode.OK and isinstance(reply, pb.RouteResponse)
    assert reply.catalog_text
    code, details = call(server, provider.token("payments-client"), "SkillStats")
    assert code is grpc.StatusCode.PERMISSION_DENIED and "payments-gateway" in str(details)
    assert call(server, provider.token("watcher-client"), "SkillStats")[0] is \
        grpc.StatusCode.OK
    assert call(server, "tok-static")[0] is grpc.StatusCode.OK


@pytest.mark.parametrize("case", ["expired", "audience", "issuer", "foreign key", "subject"])
def test_a_bad_token_is_unauthenticated(server: RouterServer, provider: Provider,
                                        case: str) -> None:
    token = {"expired": lambda: provider.token("payments-client",
                                               exp=int(time.time()) - 300),
             "audience": lambda: provider.token("payments-client", aud="another"),
             "issuer": lambda: provider.token("payments-client", iss="https://evil.example"),
             "foreign key": lambda: provider.token("payments-client", rsa_key("k1")),
             "subject": lambda: provider.token("stranger")}[case]()
    code, details = call(server, token)
    assert code is grpc.StatusCode.UNAUTHENTICATED and token not in str(details)


def test_rotation_the_provider_down_and_one_fetch(server: RouterServer,
                                                  provider: Provider) -> None:
    before = provider.count()
    for _ in range(10):
        assert call(server, provider.token("payments-client"))[0] is grpc.StatusCode.OK
    assert provider.count() - before <= 1  # at most the first fetch, none per call
    rotated = rsa_key("k-new")
    provider.keys.insert(0, rotated)
    assert call(server, provider.token("payments-client", rotated))[0] is grpc.StatusCode.OK
    provider.down = True
    try:
        assert call(server, provider.token("payments-client", rotated))[0] is \
            grpc.StatusCode.OK
        assert call(server, provider.token("payments-client", rsa_key("k-x")))[0] is \
            grpc.StatusCode.UNAUTHENTICATED
    finally:
        provider.down = False
