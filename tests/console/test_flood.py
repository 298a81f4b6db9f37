"""A connection flood against the console inside ``serve --ops-port``, in a subprocess with a
lowered file limit (256): 600 loopback connections that send half a request and stop. The
server closes every one of them (the cap at once, the rest at the header deadline, 2 s here),
the gRPC port answers a new gateway meanwhile, the console answers again afterwards, and 300
malformed requests leave a bounded number of log lines."""

from __future__ import annotations

import subprocess
import time

import grpc
import httpx2

from router.v1 import router_pb2 as pb
from tests.console.conftest import PDF_SKILL, Catalog
from tests.support.flood import closed_by_server, file_limit, garbage_requests, half_requests
from tests.support.ports import free_port
from tests.support.processes import cli_process
from tests.support.servers import make_stub

FILES = 256
FLOOD = 600
HEADER_TIMEOUT = 2.0


def grpc_address(proc: subprocess.Popen[str]) -> str:
    """The gRPC address ``serve`` prints first; its stderr in the failure when it printed
    nothing (it ended before listening)."""
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    assert "listening on " in line, (
        f"serve printed {line!r} (exit code {proc.poll()}): {'' if line else proc.stderr.read()}")
    return line.split("listening on ", 1)[1].split()[0]


def test_a_flood_of_half_requests_is_closed_and_grpc_keeps_answering(catalog: Catalog) -> None:
    port = free_port()
    env = {"SKILL_ROUTER_OPS_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT)}
    with cli_process("serve", "--index", str(catalog.index), "--port", "0", "--metrics-port",
                     "0", "--poll-seconds", "0", "--ops-port", str(port), env=env,
                     preexec_fn=file_limit(FILES)) as proc:
        address = grpc_address(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("ops console: ")
        started = time.monotonic()
        with half_requests(port, FLOOD) as flood:
            # a new gateway, while every flood connection is still open on our side
            with grpc.insecure_channel(address) as channel:
                reply = make_stub(channel).Route(pb.RouteRequest(message="merge two PDF files"),
                                                 timeout=20.0)
            assert PDF_SKILL in [s.name for s in reply.skills]
            closed = closed_by_server(flood, time.monotonic() + HEADER_TIMEOUT + 30.0)
            took = time.monotonic() - started
        assert closed == FLOOD, f"{FLOOD - closed} flood connections still open after {took}s"
        answer = httpx2.get(f"http://127.0.0.1:{port}/skills", timeout=30.0)
        assert answer.status_code == 200 and PDF_SKILL in answer.text
        garbage_requests(port, 300)
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    lines = err.splitlines()
    invalid = [line for line in lines if "Invalid HTTP request" in line]
    assert 1 <= len(invalid) <= 11, len(invalid)  # REPEATS kept, the rest dropped
    assert len(lines) < 100, "\n".join(lines[-20:])
