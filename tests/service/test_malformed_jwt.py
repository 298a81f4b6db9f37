"""A JWT whose header (or claims) is thousands of nested JSON arrays, over a real gRPC port with an
identity provider configured: UNAUTHENTICATED like any bad token (not UNKNOWN, no traceback),
and the server goes on answering."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.oidc import Provider, identity_provider, oidc_section
from tests.support.servers import serving


def _part(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with identity_provider() as running:
        yield running


@pytest.mark.parametrize("where", ["header", "claims"])
def test_a_deeply_nested_jwt_is_unauthenticated(engine: Engine, provider: Provider,
                                                tmp_path: Path, where: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    nested = b"[" * 2500 + b"]" * 2500  # past the JSON parser's depth; within 8 KiB metadata
    header = nested if where == "header" else b'{"alg":"RS256","kid":"k1"}'
    token = f"{_part(header)}.{_part(nested if where == 'claims' else b'{}')}.{_part(b's')}"
    path = tmp_path / "principals.yaml"
    static = hashlib.sha256(b"tok-static").hexdigest()
    path.write_text(oidc_section(provider) + "principals:\n"
                    f"  - name: legacy\n    token_sha256: \"{static}\"\n    roles: [route]\n"
                    "    catalogs: '*'\n")
    with serving(engine, principals_file=str(path)) as served:
        for _ in range(3):
            with pytest.raises(grpc.RpcError) as caught:
                served.stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                                       metadata=[("authorization", f"Bearer {token}")])
            assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
        assert served.stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                                      metadata=[("authorization", "Bearer tok-static")]).skills
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text
