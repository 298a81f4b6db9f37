"""Measurement helpers for the benchmark: latency loops, concurrent load, gRPC, cold start."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

from benchmarks.openmp import child_env

log = logging.getLogger(__name__)


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p99 / mean in milliseconds."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    if ms.size == 0:
        return {"p50_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "n": 0}
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3),
            "mean_ms": round(float(ms.mean()), 3), "n": int(ms.size)}


def latencies(call: Callable[[str], object], inputs: Sequence[str],
              warmup: int = 3) -> dict[str, float]:
    """Time ``call`` once per input, one at a time (after ``warmup`` untimed calls)."""
    for text in inputs[:warmup]:
        call(text)
    times = []
    for text in inputs[warmup:]:
        started = time.perf_counter()
        call(text)
        times.append(time.perf_counter() - started)
    return summary(times)


def interleaved(calls: dict[str, Callable[[str], object]], inputs: Sequence[str],
                warmup: int = 3, same: Mapping[str, str] | None = None,
                ) -> dict[str, dict[str, float]]:
    """Latencies of several callables taken in turn, request by request, so load from other
    processes on a shared machine falls on all of them alike. Each gets its own inputs
    (``inputs`` is split evenly), so none is served from a cache another one filled, except
    the callables ``same`` maps to another one: they get that one's input (a bare encode of
    the message a Route has, which no cache of the encoder's own answers), right after it
    one round and right before it the next, so neither is always the one that runs on the
    caches the callable before them left (a torch encode evicts the router's)."""
    same = same or {}
    names = list(calls)
    own = [name for name in names if name not in same]
    swapped = list(names)
    for name, source in same.items():
        a, b = swapped.index(name), swapped.index(source)
        swapped[a], swapped[b] = swapped[b], swapped[a]
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(0, len(inputs) - len(own) + 1, len(own)):
        given = dict(zip(own, inputs[i:i + len(own)], strict=True))
        for name in (swapped if (i // len(own)) % 2 else names):
            started = time.perf_counter()
            calls[name](given[same.get(name, name)])
            if i >= warmup * len(own):
                times[name].append(time.perf_counter() - started)
    return {name: summary(times[name]) for name in names}


def throughput(call: Callable[[str], object], inputs: Sequence[str],
               concurrency: int) -> dict[str, float]:
    """Requests per second with ``concurrency`` callers in flight, plus their latencies."""
    times: list[float] = []

    def one(text: str) -> None:
        started = time.perf_counter()
        call(text)
        times.append(time.perf_counter() - started)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        started = time.perf_counter()
        list(pool.map(one, inputs))
        elapsed = time.perf_counter() - started
    return {"concurrency": concurrency, "requests": len(inputs),
            "rps": round(len(inputs) / elapsed, 1), **summary(times)}


def rate(encode: Callable[[list[str]], object], texts: list[str]) -> float:
    """Texts per second for one batch-encode call over ``texts``."""
    started = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - started)


def grpc_route_call(address: str, pairs: list[tuple[float, float]] | None = None,
                    ) -> tuple[Callable[[str], object], Callable[[], None]]:
    """A ``Route(message)`` function over one channel to ``address``, and a closer. With
    ``pairs``, each answered call's (client seconds, server's own seconds: its
    ``server-timing`` trailer) is appended there (``benchmarks.door``)."""
    import grpc

    from router.v1 import router_pb2 as pb
    from router.v1 import router_pb2_grpc as pb_grpc

    channel = grpc.insecure_channel(address)
    stub: Any = pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]

    def call(text: str) -> object:
        return stub.Route(pb.RouteRequest(message=text), timeout=30, wait_for_ready=True)

    if pairs is None:
        return call, channel.close
    recorded = pairs

    def timed(text: str) -> object:
        started = time.perf_counter()
        response, done = stub.Route.with_call(pb.RouteRequest(message=text), timeout=30,
                                              wait_for_ready=True)
        elapsed = time.perf_counter() - started
        own = handler_seconds(done.trailing_metadata())
        if own is None:
            raise RuntimeError("the server's answer carried no server-timing trailing metadata")
        recorded.append((elapsed, own))
        return response

    return timed, channel.close


def handler_seconds(metadata: Sequence[tuple[str, Any]] | None) -> float | None:
    """The server's own seconds from a call's trailing metadata (None without them)."""
    from router.service.interceptors import SERVER_TIMING_KEY

    for key, value in metadata or ():
        if key == SERVER_TIMING_KEY and isinstance(value, str):
            for part in value.split(";")[1:]:
                name, _, number = part.strip().partition("=")
                if name == "dur":
                    return float(number) / 1000.0
    return None


def json_route_call(url: str) -> tuple[Callable[[str], object], Callable[[], None]]:
    """A ``Route(message)`` function over one kept-alive HTTP/1.1 connection to the JSON door
    at ``url`` (``http://host:port``), and a closer."""
    import http.client
    import json
    from urllib.parse import urlsplit

    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port,
                                            timeout=30)
    connection.connect()  # without delay, as curl and Node's clients send
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}

    def call(text: str) -> object:
        connection.request("POST", "/router.v1.SkillRouter/Route",
                           body=json.dumps({"message": text}).encode("utf-8"), headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"Route over JSON answered {answer.status}: {body[:200]!r}")
        return body

    return call, connection.close


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve_process(index_dir: Path, env: dict[str, str] | None = None,
                  timeout: float = 120.0, http_port: int = 0) -> Iterator[str]:
    """``skill-router serve`` in its own process (as a gateway would reach it), with the
    environment the benchmark started with plus ``env`` (not the benchmark's own OpenMP wait
    policy, ``benchmarks.openmp``) and the JSON door on ``http_port`` (0: none); yields the
    address once it accepts connections, and stops it afterwards."""
    port = free_port()
    command = [sys.executable, "-m", "router.cli", "serve", "--index", str(index_dir),
               "--host", "127.0.0.1", "--port", str(port), "--metrics-port", "0",
               *(["--http-port", str(http_port)] if http_port else [])]
    # The server logs a line per call: a file, not a pipe nobody drains (a full pipe blocks it).
    with tempfile.TemporaryFile() as log_file:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log_file,
                                env=child_env(env))
        try:
            deadline = time.perf_counter() + timeout
            _wait_for_port(proc, port, deadline, log_file)
            if http_port:
                _wait_for_port(proc, http_port, deadline, log_file)
            yield f"127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def cold_start(index_dir: Path, message: str, timeout: float = 120.0,
               env: dict[str, str] | None = None) -> dict[str, Any]:
    """Seconds from starting ``skill-router serve`` to its first answered Route."""
    started = time.perf_counter()
    with serve_process(index_dir, env, timeout) as address:
        call, close = grpc_route_call(address)
        try:
            call(message)
        finally:
            close()
        return {"seconds": round(time.perf_counter() - started, 3), "env": env or {}}


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, deadline: float,
                   log_file: IO[bytes]) -> None:
    """Poll until the server accepts TCP connections (gRPC reconnect backoff would blur it)."""
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            log_file.seek(0)
            err = log_file.read().decode(errors="replace")
            raise RuntimeError(f"server exited with {proc.returncode}: {err[-500:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError("the server did not start listening in time")
