"""Sustained Route load against a skill-router server on loopback, bounded in time and count.

Starts ``skill-router serve --index DIR`` on a free loopback port (or uses ``--target`` with
``--pid`` for a server already running on this machine), drives Route calls from several
client threads through one channel, and prints one row per interval: elapsed seconds, calls,
throughput, errors and the server's resident memory. A JSON summary ends the output.

    .venv/bin/python scripts/load.py --index index_data --seconds 60 --threads 4
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
MESSAGES = ("extract the tables from this PDF invoice", "write a commit message for my change",
            "make a chart from this spreadsheet", "deploy the container to the cluster",
            "summarise these meeting notes", "fill in the PDF form", "review this pull request",
            "translate this document to French")


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, seconds: float, ok: bool) -> None:
        with self.lock:
            self.calls += 1
            self.errors += 0 if ok else 1
            self.latencies.append(seconds)


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MiB (0 when it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def start_server(index: str) -> tuple[subprocess.Popen[str], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "router.cli", "serve", "--index", index, "--host", "127.0.0.1",
            "--port", str(port), "--metrics-port", "0", "--poll-seconds", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    if "listening on" not in proc.stdout.readline():
        proc.kill()
        raise SystemExit("the server did not start")
    return proc, f"127.0.0.1:{port}"


def drive(stub: pb_grpc.SkillRouterStub, tally: Tally, stop: threading.Event,
          limit: int, offset: int, unique: bool) -> None:
    i = offset
    while not stop.is_set():
        with tally.lock:
            if tally.calls >= limit:
                return
        started = time.perf_counter()
        try:
            message = MESSAGES[i % len(MESSAGES)] + (f" (case {i})" if unique else "")
            stub.Route(pb.RouteRequest(message=message, session_id=f"s{i}"), timeout=5)
            ok = True
        except grpc.RpcError:
            ok = False
        tally.add(time.perf_counter() - started, ok)
        i += 1


def report(tally: Tally, stop: threading.Event, pid: int, seconds: float,
           interval: float, limit: int) -> list[dict[str, float]]:
    rows, started, last_calls = [], time.monotonic(), 0
    print(f"{'t(s)':>6} {'calls':>8} {'calls/s':>8} {'errors':>7} {'rss(MiB)':>9}")
    while not stop.wait(interval):
        elapsed = time.monotonic() - started
        with tally.lock:
            calls, errors = tally.calls, tally.errors
        row = {"t": round(elapsed, 1), "calls": calls,
               "rps": round((calls - last_calls) / interval, 1), "errors": errors,
               "rss_mb": round(rss_mb(pid), 1)}
        rows.append(row)
        print(f"{row['t']:>6} {calls:>8} {row['rps']:>8} {errors:>7} {row['rss_mb']:>9}",
              flush=True)
        last_calls = calls
        if elapsed >= seconds or calls >= limit:
            stop.set()
    return rows


def summary(tally: Tally, rows: list[dict[str, float]], wall: float) -> dict[str, float]:
    ordered = sorted(tally.latencies) or [0.0]

    def pct(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    rss = [r["rss_mb"] for r in rows] or [0.0]
    return {"calls": tally.calls, "seconds": round(wall, 1),
            "throughput_per_s": round(tally.calls / wall, 1) if wall else 0.0,
            "error_rate": round(tally.errors / tally.calls, 6) if tally.calls else 0.0,
            "p50_ms": pct(0.50), "p99_ms": pct(0.99), "rss_first_mb": rss[0],
            "rss_last_mb": rss[-1], "rss_max_mb": max(rss)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", help="index folder: start a server on it for this run")
    where.add_argument("--target", help="host:port of a running loopback server (with --pid)")
    parser.add_argument("--pid", type=int, default=0, help="server process id, for its memory")
    parser.add_argument("--seconds", type=float, default=30.0, help="run time, at most 600")
    parser.add_argument("--max-calls", type=int, default=1_000_000, help="stop after this many")
    parser.add_argument("--threads", type=int, default=4, help="client threads (1 to 64)")
    parser.add_argument("--unique", action="store_true",
                        help="make every message unique (no query-embedding cache hits)")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds per report row")
    args = parser.parse_args()
    args.seconds = min(max(args.seconds, 1.0), 600.0)
    args.threads = min(max(args.threads, 1), 64)
    if args.target and args.target.rsplit(":", 1)[0] not in LOOPBACK:
        parser.error("--target must be a loopback address (127.0.0.1, localhost or [::1])")
    return args


def main() -> int:
    args = parse_args()
    proc, target = start_server(args.index) if args.index else (None, args.target)
    pid = proc.pid if proc is not None else args.pid
    tally, stop = Tally(), threading.Event()
    try:
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            stub = pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]
            workers = [threading.Thread(target=drive, args=(stub, tally, stop, args.max_calls,
                                                            n * 1_000_000, args.unique),
                                        daemon=True)
                       for n in range(args.threads)]
            started = time.monotonic()
            for worker in workers:
                worker.start()
            rows = report(tally, stop, pid, args.seconds, args.interval, args.max_calls)
            for worker in workers:
                worker.join(timeout=10)
            wall = time.monotonic() - started
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
    print(json.dumps(summary(tally, rows, wall), indent=2))
    return 0 if tally.errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
