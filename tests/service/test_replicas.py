"""Scale-out on loopback: three server processes behind one client channel with round_robin
load balancing and a retry policy on UNAVAILABLE; killing one mid-load fails no call."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import grpc
import pytest

from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.indexes import index_catalog
from tests.support.ports import free_ports
from tests.support.processes import cli_process
from tests.support.servers import make_stub

CALLS_PER_WORKER = 150
WORKERS = 4
KILL_AFTER = 150  # calls completed before one replica is killed

SERVICE_CONFIG = json.dumps({
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [{
        "name": [{"service": "router.v1.SkillRouter"}],
        "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "0.5s",
                        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]},
    }],
})


@pytest.fixture()
def replicas(tmp_path: Path) -> Iterator[tuple[list[subprocess.Popen[str]], list[int]]]:
    _, out = index_catalog(tmp_path)
    ports = free_ports(3)
    with ExitStack() as stack:
        procs = [stack.enter_context(cli_process(
            "serve", "--index", str(out), "--host", "127.0.0.1", "--port", str(port),
            "--metrics-port", "0", "--poll-seconds", "0", stderr=subprocess.DEVNULL))
            for port in ports]
        for proc in procs:
            assert proc.stdout is not None
            assert "listening on" in proc.stdout.readline()
        yield procs, ports


def test_killing_one_replica_fails_no_call(
        replicas: tuple[list[subprocess.Popen[str]], list[int]]) -> None:
    procs, ports = replicas
    target = "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)
    options = [("grpc.enable_retries", 1), ("grpc.service_config", SERVICE_CONFIG)]
    done, failures, lock = [0], list[str](), threading.Lock()
    killed = threading.Event()

    def drive(stub: pb_grpc.SkillRouterStub) -> None:
        for i in range(CALLS_PER_WORKER):
            try:
                stub.Route(pb.RouteRequest(message=f"extract PDF tables {i}"), timeout=10)
            except grpc.RpcError as exc:
                failures.append(f"{exc.code()}: {exc.details()}")  # type: ignore[attr-defined]
            with lock:
                done[0] += 1
                if done[0] == KILL_AFTER:
                    procs[0].kill()
                    killed.set()

    with grpc.insecure_channel(target, options=options) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        stub = make_stub(channel)
        with ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(lambda _: drive(stub), range(WORKERS)))
    assert killed.is_set() and procs[0].wait(timeout=5) == -signal.SIGKILL
    assert failures == [] and done[0] == WORKERS * CALLS_PER_WORKER
