"""search_skills round trips through the MCP door vs Route over gRPC, on one index.

    python benchmarks/mcp_door.py --index DIR [--calls 200] [--json]

Starts, as subprocesses on free loopback ports: the gRPC service (``serve``), the door over
stdio and over streamable HTTP serving the index in-process (``mcp --index``), and the HTTP door
proxying to the gRPC service (``mcp --target``). Each is warmed up, then asked the same queries
(a suffix per mode keeps every query a cache miss), one mode after the other for each query.
Reports round-trip milliseconds as seen by
the caller: p50, p99 and mean.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from router.client import SkillRouterClient  # noqa: E402

QUERIES = (
    "extract the tables from this PDF and put them in a spreadsheet",
    "write a commit message for my staged changes",
    "review this pull request for security problems",
    "build a docker image for the service and deploy it",
    "summarise the meeting notes into action items",
    "make a chart of monthly sales from the CSV",
    "fix the failing unit test in the parser",
    "draft a friendly reply to this customer email",
    "translate the README into German",
    "plan a database migration with no downtime",
)
WARM_UP = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@contextmanager
def process(args: list[str], port: int) -> Iterator[None]:
    """``python -m router.cli ARGS``, until ``port`` accepts connections."""
    proc = subprocess.Popen([sys.executable, "-m", "router.cli", *args], cwd=REPO, env=env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{args[0]} did not start") from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def queries(mode: str, calls: int) -> list[str]:
    return [f"{QUERIES[i % len(QUERIES)]} ({mode} {i})" for i in range(calls)]


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
            "mean_ms": round(statistics.fmean(ordered) * 1000, 2)}


Call = Callable[[str], Awaitable[object]]


def grpc_call(client: SkillRouterClient) -> Call:
    async def call(query: str) -> object:
        return client.route(query, session_id="bench")

    return call


def mcp_call(host: Client) -> Call:
    async def call(query: str) -> object:
        result = await host.call_tool("search_skills", {"query": query})
        if result.is_error:
            raise RuntimeError(f"search_skills failed: {result.content}")
        return result

    return call


async def measure(calls: dict[str, Call], count: int) -> dict[str, dict[str, float]]:
    """Warm every mode up, then time them in turn, call by call, so that a change in the
    machine's load falls on every mode alike."""
    samples: dict[str, list[float]] = {mode: [] for mode in calls}
    for mode, call in calls.items():
        for query in queries(f"warm-{mode}", WARM_UP):
            await call(query)
    for i in range(count):
        for mode, call in calls.items():
            query = queries(mode, count)[i]
            started = time.perf_counter()
            await call(query)
            samples[mode].append(time.perf_counter() - started)
    return {mode: summary(values) for mode, values in samples.items()}


async def run_all(index: str, count: int) -> dict[str, dict[str, float]]:
    grpc_port, http_port, proxy_port = free_port(), free_port(), free_port()
    stdio = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env(),
                                  args=["-m", "router.cli", "mcp", "--index", index])
    with process(["serve", "--index", index, "--port", str(grpc_port), "--metrics-port", "0",
                  "--poll-seconds", "0"], grpc_port), \
            process(["mcp", "--index", index, "--transport", "http",
                     "--port", str(http_port)], http_port), \
            process(["mcp", "--target", f"127.0.0.1:{grpc_port}", "--transport", "http",
                     "--port", str(proxy_port)], proxy_port), \
            SkillRouterClient(f"127.0.0.1:{grpc_port}", timeout=30) as client:
        async with Client(stdio, mode="legacy", read_timeout_seconds=60) as over_stdio, \
                Client(f"http://127.0.0.1:{http_port}/mcp", mode="legacy",
                       read_timeout_seconds=60) as over_http, \
                Client(f"http://127.0.0.1:{proxy_port}/mcp", mode="legacy",
                       read_timeout_seconds=60) as proxied:
            return await measure({
                "Route over gRPC": grpc_call(client),
                "search_skills over stdio": mcp_call(over_stdio),
                "search_skills over HTTP": mcp_call(over_http),
                "search_skills, HTTP door -> gRPC": mcp_call(proxied),
            }, count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index folder (built by `index`)")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per mode")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    results = anyio.run(run_all, args.index, args.calls)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'mode':36} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for mode, row in results.items():
        print(f"{mode:36} {row['calls']:>6} {row['p50_ms']:>8} {row['p99_ms']:>8} "
              f"{row['mean_ms']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
