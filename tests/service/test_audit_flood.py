"""A flood of refused calls against a real server with an audit log: 2,000 calls with a wrong
token write at most 200 lines, one of them the summary of those left out (their count, codes and
callers); a served call after it is written, as always."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.principals import entry, principals_yaml
from tests.support.servers import make_stub, start_server

REFUSED_CALLS = 2000
MAX_LINES = 200


def test_refused_calls_are_audited_at_a_bounded_rate_with_a_summary(
        tree_engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "principals.yaml").write_text(principals_yaml(entry("router", "tok-route",
                                                                    ["route"])))
    log = tmp_path / "audit.jsonl"
    server = start_server(tree_engine, principals_file=str(tmp_path / "principals.yaml"),
                          audit_log=str(log), max_workers=8)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = make_stub(channel)

            def refused(index: int) -> grpc.StatusCode:
                try:
                    stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                                    metadata=[("authorization", f"Bearer wrong-{index}")])
                except grpc.RpcError as exc:
                    return exc.code()  # type: ignore[attr-defined,no-any-return]
                return grpc.StatusCode.OK

            with ThreadPoolExecutor(8) as pool:
                codes = list(pool.map(refused, range(REFUSED_CALLS)))
            assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}
            stub.ListSkills(pb.ListSkillsRequest(), timeout=30,
                            metadata=[("authorization", "Bearer tok-route")])
    finally:
        server.stop(0)  # the log closes: what is left is summed up
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) <= MAX_LINES, len(lines)
    written = [line for line in lines if line.get("code") == "UNAUTHENTICATED"]
    summaries = [line for line in lines if line.get("event") == "audit_dropped"]
    assert summaries and written
    assert len(written) + sum(s["dropped"] for s in summaries) == REFUSED_CALLS
    assert all(set(s["codes"]) == {"UNAUTHENTICATED"} for s in summaries)
    assert [line["principal"] for line in lines if line.get("code") == "OK"] == ["router"]
